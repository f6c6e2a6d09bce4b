// The concrete models behind Model::Create (internal to models/): each
// constructor declares its tensors; Create has validated the spec.
#pragma once

#include <memory>

#include "gpu/cpu_ops.hpp"
#include "models/model.hpp"

namespace actorrec::models {

std::unique_ptr<Model> MakeDlrm(const ModelSpec& spec, gpu::Backend* backend);
// Wide&Deep, or DeepFM when fm (the FM second-order term and "fm.bias").
std::unique_ptr<Model> MakeWideDeep(const ModelSpec& spec, gpu::Backend* backend, bool fm);
std::unique_ptr<Model> MakeDcn(const ModelSpec& spec, gpu::Backend* backend);

// DLRM's interaction width: embedding_dim + (T + 1)·T / 2 with dense features,
// T·(T − 1) / 2 without (no bottom MLP: the pairs of the T embeddings only).
int DlrmInteractionWidth(const ModelSpec& spec);

// DLRM's interaction on the host (gpu/cpu_ops.hpp; the name the CUDA
// kernels' host tests use).
using gpu::cpu::InteractionBackward;
using gpu::cpu::InteractionForward;

}  // namespace actorrec::models
