// The concrete models behind Model::Create (internal to models/): each
// constructor declares its tensors; Create has validated the spec.
#pragma once

#include <memory>

#include "models/model.hpp"

namespace actorrec::models {

std::unique_ptr<Model> MakeDlrm(const ModelSpec& spec, gpu::Backend* backend);
// Wide&Deep, or DeepFM when fm (the FM second-order term and "fm.bias").
std::unique_ptr<Model> MakeWideDeep(const ModelSpec& spec, gpu::Backend* backend, bool fm);
std::unique_ptr<Model> MakeDcn(const ModelSpec& spec, gpu::Backend* backend);

// DLRM's interaction width: embedding_dim + (T + 1)·T / 2 with dense features,
// T·(T − 1) / 2 without (no bottom MLP: the pairs of the T embeddings only).
int DlrmInteractionWidth(const ModelSpec& spec);

// DLRM's interaction over n samples (models/dlrm.cpp states each sum's
// order; exposed for the CUDA kernels' host tests; cloned for the vector
// width at the definition only, as layers.hpp's AddBias): r (n × width) from z
// (n × d) and pooled (n × T × d); z null means no dense features (no z in F
// nor in r); columns is scratch of d × (T + 1, or T without z, rounded up to
// 16) floats.
void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width, float* r,
                        float* columns);
// dz (n × d) and dpooled (n × T × d) from dr (n × width); z and dz both null
// without dense features; G is scratch of T × T floats.
void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                         size_t width, float* dz, float* dpooled, float* G);

}  // namespace actorrec::models
