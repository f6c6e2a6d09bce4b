// A device-resident model's step (DLRM, Wide&Deep, DeepFM, DCN) through
// gpu::Backend's memory and model ops, on the host: a fake device backend (memory of its own that is host
// memory underneath, every op the CPU's) checks that each op gets pointers
// of its memory and each Gemm/pool call host pointers, counts the copies,
// and must give the CPU backend's bits. What a GPU run adds is only the
// kernels' arithmetic (tests/gpu/gpu_device_test.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "data/gen/random.hpp"
#include "gpu/buffer.hpp"
#include "gpu/cpu_backend.hpp"
#include "gpu/cpu_ops.hpp"
#include "models/model.hpp"
#include "random_inputs.hpp"

namespace actorrec::models {
namespace {

// Memory of its own (device_memory() true), checked: every pointer a model
// op or ResidentGemm gets must lie in one of its allocations, every pointer
// Gemm/PoolBySlot/BagGradToUnique or a copy's host side gets outside them.
class FakeDevice final : public gpu::Backend {
 public:
  std::string name() const override { return "fake device"; }
  bool device_memory() const override { return true; }

  float* Allocate(size_t floats) override {
    float* p = new float[floats];
    std::fill(p, p + floats, 1e30f);  // garbage, as a device's fresh memory
    live_[p] = floats;
    ++allocations;
    return p;
  }
  void Free(float* p) override {
    if (p == nullptr) return;
    if (live_.erase(p) == 0) errors.push_back("Free of memory not allocated here");
    delete[] p;
  }
  void Upload(float* dst, const float* host, size_t floats) override {
    Device(dst, floats, "Upload dst");
    Host(host, "Upload src");
    ++uploads;
    cpu_->Upload(dst, host, floats);
  }
  void Download(float* host, const float* src, size_t floats) override {
    Device(src, floats, "Download src");
    Host(host, "Download dst");
    ++downloads;
    cpu_->Download(host, src, floats);
  }

  void Gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    Host(a, "Gemm a"), Host(b, "Gemm b"), Host(c, "Gemm c");
    ++staged;
    cpu_->Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void PoolBySlot(const float* rows, size_t row_stride, size_t width, const gpu::SlotBags& bags, gpu::Pooling pooling,
                  float* out, size_t out_stride) override {
    Host(rows, "PoolBySlot rows"), Host(out, "PoolBySlot out");
    cpu_->PoolBySlot(rows, row_stride, width, bags, pooling, out, out_stride);
  }
  void BagGradToUnique(const float* g, size_t in_stride, size_t width, const gpu::SlotBags& bags,
                       gpu::Pooling pooling, float* out) override {
    Host(g, "BagGradToUnique in"), Host(out, "BagGradToUnique out");
    cpu_->BagGradToUnique(g, in_stride, width, bags, pooling, out);
  }

  void ResidentGemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) override {
    Device(a, 1, "ResidentGemm a"), Device(b, 1, "ResidentGemm b"), Device(c, 1, "ResidentGemm c");
    cpu_->ResidentGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void BiasAdd(float* out, const float* bias, size_t n, int width, bool relu) override {
    Device(out, n * width, "BiasAdd out"), Device(bias, width, "BiasAdd bias");
    cpu_->BiasAdd(out, bias, n, width, relu);
  }
  void ReluGrad(const float* go, const float* out, float* gk, size_t count) override {
    Device(go, count, "ReluGrad go"), Device(out, count, "ReluGrad out"), Device(gk, count, "ReluGrad gk");
    cpu_->ReluGrad(go, out, gk, count);
  }
  void BiasGrad(const float* g, size_t n, int width, float* db) override {
    Device(g, n * width, "BiasGrad g"), Device(db, width, "BiasGrad db");
    cpu_->BiasGrad(g, n, width, db);
  }
  double BceWithLogits(const float* logits, const float* labels, size_t n, float scale, float* dlogit) override {
    Device(logits, n, "Bce logits"), Device(labels, n, "Bce labels"), Device(dlogit, n, "Bce dlogit");
    return cpu_->BceWithLogits(logits, labels, n, scale, dlogit);
  }
  void InteractionForward(const float* z, const float* pooled, size_t n, size_t T, size_t d, size_t width,
                          float* r) override {
    if (z != nullptr) Device(z, n * d, "InteractionForward z");
    Device(pooled, n * T * d, "InteractionForward pooled"), Device(r, n * width, "InteractionForward r");
    cpu_->InteractionForward(z, pooled, n, T, d, width, r);
  }
  void InteractionBackward(const float* dr, const float* z, const float* pooled, size_t n, size_t T, size_t d,
                           size_t width, float* dz, float* dpooled) override {
    Device(dr, n * width, "InteractionBackward dr"), Device(pooled, n * T * d, "InteractionBackward pooled");
    Device(dpooled, n * T * d, "InteractionBackward dpooled");
    if (z != nullptr) Device(z, n * d, "InteractionBackward z"), Device(dz, n * d, "InteractionBackward dz");
    cpu_->InteractionBackward(dr, z, pooled, n, T, d, width, dz, dpooled);
  }

  void DeepInput(const float* dense, const float* pooled, size_t n, size_t dd, size_t T, size_t C, size_t d, size_t w,
                 float* x) override {
    Device(dense, n * dd, "DeepInput dense"), Device(pooled, n * (T + C) * w, "DeepInput pooled");
    Device(x, n * (dd + T * d), "DeepInput x");
    cpu_->DeepInput(dense, pooled, n, dd, T, C, d, w, x);
  }
  void WideDeepLogits(const float* deep, const float* pooled, size_t n, size_t T, size_t C, size_t d,
                      const float* bias, bool fm, float* sums, float* logits) override {
    Device(deep, n, "WideDeepLogits deep"), Device(pooled, n * (T + C) * (d + 1), "WideDeepLogits pooled");
    Device(bias, 1, "WideDeepLogits bias"), Device(logits, n, "WideDeepLogits logits");
    if (fm) Device(sums, n * d, "WideDeepLogits sums");
    cpu_->WideDeepLogits(deep, pooled, n, T, C, d, bias, fm, sums, logits);
  }
  void WideDeepPooledGrad(const float* dx, const float* pooled, const float* sums, const float* dlogit, size_t n,
                          size_t dd, size_t T, size_t C, size_t d, float* pooled_grad) override {
    Device(dx, n * (dd + T * d), "WideDeepPooledGrad dx");
    Device(pooled, n * (T + C) * (d + 1), "WideDeepPooledGrad pooled");
    Device(dlogit, n, "WideDeepPooledGrad dlogit"), Device(pooled_grad, n * (T + C) * (d + 1), "WideDeepPooledGrad out");
    if (sums != nullptr) Device(sums, n * d, "WideDeepPooledGrad sums");
    cpu_->WideDeepPooledGrad(dx, pooled, sums, dlogit, n, dd, T, C, d, pooled_grad);
  }

  void CrossForward(const float* x0, const float* x, const float* w, const float* b, size_t n, size_t d0, float* s,
                    float* next) override {
    Device(x0, n * d0, "CrossForward x0"), Device(x, n * d0, "CrossForward x"), Device(w, d0, "CrossForward w");
    Device(b, d0, "CrossForward b"), Device(s, n, "CrossForward s"), Device(next, n * d0, "CrossForward next");
    cpu_->CrossForward(x0, x, w, b, n, d0, s, next);
  }
  void DcnLogits(const float* fw, const float* fb, const float* xl, const float* h, size_t n, size_t d0, size_t hw,
                 float* logits) override {
    Device(fw, d0 + hw, "DcnLogits fw"), Device(fb, 1, "DcnLogits fb"), Device(xl, n * d0, "DcnLogits xl");
    Device(h, n * hw, "DcnLogits h"), Device(logits, n, "DcnLogits logits");
    cpu_->DcnLogits(fw, fb, xl, h, n, d0, hw, logits);
  }
  void DcnFinalBackward(const float* dlogit, const float* fw, const float* xl, const float* h, size_t n, size_t d0,
                        size_t hw, float* gfw, float* gfb, float* g, float* dh) override {
    Device(dlogit, n, "DcnFinalBackward dlogit"), Device(fw, d0 + hw, "DcnFinalBackward fw");
    Device(xl, n * d0, "DcnFinalBackward xl"), Device(h, n * hw, "DcnFinalBackward h");
    Device(gfw, d0 + hw, "DcnFinalBackward gfw"), Device(gfb, 1, "DcnFinalBackward gfb");
    Device(g, n * d0, "DcnFinalBackward g"), Device(dh, n * hw, "DcnFinalBackward dh");
    cpu_->DcnFinalBackward(dlogit, fw, xl, h, n, d0, hw, gfw, gfb, g, dh);
  }
  void CrossBackward(const float* x0, const float* x, const float* w, const float* s, size_t n, size_t d0, float* g,
                     float* dx0, float* gw, float* gb) override {
    Device(x0, n * d0, "CrossBackward x0"), Device(x, n * d0, "CrossBackward x"), Device(w, d0, "CrossBackward w");
    Device(s, n, "CrossBackward s"), Device(g, n * d0, "CrossBackward g"), Device(dx0, n * d0, "CrossBackward dx0");
    Device(gw, d0, "CrossBackward gw"), Device(gb, d0, "CrossBackward gb");
    cpu_->CrossBackward(x0, x, w, s, n, d0, g, dx0, gw, gb);
  }
  void DcnPooledGrad(const float* g, const float* dx0, size_t n, size_t d0, size_t dd, float* pooled_grad) override {
    Device(g, n * d0, "DcnPooledGrad g"), Device(dx0, n * d0, "DcnPooledGrad dx0");
    Device(pooled_grad, n * (d0 - dd), "DcnPooledGrad out");
    cpu_->DcnPooledGrad(g, dx0, n, d0, dd, pooled_grad);
  }
  void SetZero(float* p, size_t floats) override {
    Device(p, floats, "SetZero");
    // Memory of this fake starts as garbage, not zeros: a missing SetZero
    // shows.
    cpu_->SetZero(p, floats);
  }

  size_t live() const { return live_.size(); }
  std::vector<std::string> errors;
  int allocations = 0, uploads = 0, downloads = 0, staged = 0;

 private:
  // Whether [p, p + floats) lies in one allocation.
  bool Inside(const float* p, size_t floats) const {
    auto it = live_.upper_bound(const_cast<float*>(p));
    if (it == live_.begin()) return false;
    --it;
    return p >= it->first && p + floats <= it->first + it->second;
  }
  void Device(const float* p, size_t floats, const char* what) {
    if (floats > 0 && !Inside(p, floats)) errors.push_back(std::string(what) + ": not in the device's memory");
  }
  void Host(const float* p, const char* what) {
    if (p != nullptr && Inside(p, 1)) errors.push_back(std::string(what) + ": a device pointer where a host one belongs");
  }

  std::unique_ptr<gpu::Backend> cpu_ = gpu::MakeCpuBackend();
  std::map<float*, size_t> live_;
};

ModelSpec Spec(config::ModelKind kind, uint32_t dense, uint32_t tables, uint32_t d, std::vector<int> deep = {5, 1}) {
  ModelSpec s;
  s.kind = kind;
  s.dense_features = dense;
  s.tables = tables;
  s.embedding_dim = d;
  if (dense > 0) s.bottom_mlp = {7, static_cast<int>(d)};
  s.top_mlp = {6, 4, 1};
  s.deep_mlp = std::move(deep);
  s.cross_layers = 2;
  return s;
}

// Steps of both models on the same batches (sizes up and down, so buffers
// grow and are reused), with an SGD step on the host parameters in between
// (as the trainer's dense optimizer): every logit, loss, gradient and
// pooled gradient bitwise equal.
void TrainBoth(Model& cpu, Model& dev) {
  for (int step = 0; step < 4; ++step) {
    const size_t n = step == 2 ? 3 : 5 + 4 * step;
    const Inputs b = RandomInputs(cpu, n, step);
    const SliceView view{n, b.dense.data(), b.labels.data()};
    std::vector<float> gc(b.pooled.size()), gd(b.pooled.size());
    const double lc = cpu.ForwardBackward(view, b.pooled.data(), gc.data(), 0.5f);
    const double ld = dev.ForwardBackward(view, b.pooled.data(), gd.data(), 0.5f);
    INFO("step " << step << ", " << n << " samples");
    CHECK(lc == ld);
    CHECK(std::equal(cpu.logits(), cpu.logits() + n, dev.logits()));
    CHECK(gc == gd);
    REQUIRE(std::equal(cpu.grads().begin(), cpu.grads().end(), dev.grads().begin()));
    for (Model* m : {&cpu, &dev}) {
      for (size_t k = 0; k < m->params().size(); ++k) m->params()[k] -= 0.1f * m->grads()[k];
    }
  }
}

TEST_CASE("a device-resident model's step runs on a device backend's memory and gives the CPU's bits", "[models]") {
  auto cpu_backend = gpu::MakeCpuBackend();
  // Criteo's 26 tables at d = 16 (DLRM's interaction's vector path), a
  // scalar d, and no dense features (DLRM: no bottom MLP); DCN also without
  // its deep tower (deep_mlp = [1]: the cross network alone).
  for (config::ModelKind kind : {config::ModelKind::kDlrm, config::ModelKind::kWideDeep, config::ModelKind::kDeepFm,
                                 config::ModelKind::kDcn})
  for (auto [dense, tables, d] : {std::tuple<uint32_t, uint32_t, uint32_t>{13, 26, 16}, {3, 4, 3}, {0, 5, 8}})
  for (const std::vector<int>& deep : {std::vector<int>{5, 1}, std::vector<int>{1}}) {
    if (kind != config::ModelKind::kDcn && deep.size() == 1) continue;
    INFO(config::ModelKindName(kind) << ": dense " << dense << ", tables " << tables << ", d " << d
                                     << ", deep_mlp of " << deep.size() << " layer(s)");
    REQUIRE(RunsDeviceResident(kind));
    FakeDevice device;
    {
      const ModelSpec spec = Spec(kind, dense, tables, d, deep);
      auto cpu = Model::Create(spec, cpu_backend.get()).value();
      auto dev = Model::Create(spec, &device).value();
      CHECK(&dev->backend() == &device);  // no host view: device-resident
      cpu->Initialize(7);
      dev->Initialize(7);
      TrainBoth(*cpu, *dev);
      std::string errors;
      for (const std::string& e : device.errors) errors += e + "; ";
      INFO(errors);
      CHECK(device.errors.empty());
      CHECK(device.staged == 0);  // no GEMM on host pointers
      // Per step the inputs and parameters go up once each (params, pooled,
      // labels, dense when there are dense features), and the logits,
      // gradients and pooled gradients come down once each: whatever the
      // layer count, no activation crosses per op.
      CHECK(device.uploads == 4 * (dense > 0 ? 4 : 3));
      CHECK(device.downloads == 4 * 3);
      const int grown = device.allocations;
      TrainBoth(*cpu, *dev);  // same sizes again: nothing grows
      CHECK(device.allocations == grown);
    }
    CHECK(device.live() == 0);  // every buffer freed with its model
  }
}

TEST_CASE("the CPU backend's model ops are the host loops, bit for bit", "[models]") {
  auto be = gpu::MakeCpuBackend();
  data::gen::Rng rng(17);
  auto random = [&](size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = static_cast<float>(rng.Normal()) * (rng.Below(4) == 0 ? 1e-30f : 1.0f);
    return v;
  };
  {
    gpu::Backend* b = be.get();
    REQUIRE_FALSE(b->device_memory());
    for (int round = 0; round < 20; ++round) {
      const size_t n = 1 + rng.Below(40), T = 1 + rng.Below(27), d = 1 + rng.Below(33);
      const int width = 1 + static_cast<int>(rng.Below(70));
      const bool relu = rng.Below(2) == 0;
      const std::vector<float> x = random(n * width), bias = random(width);
      std::vector<float> o1 = x, o2 = x;
      b->BiasAdd(o1.data(), bias.data(), n, width, relu);
      gpu::cpu::AddBias(o2.data(), bias.data(), n, width, relu);
      CHECK(o1 == o2);
      std::vector<float> g1(n * width), g2(n * width);
      b->ReluGrad(x.data(), o1.data(), g1.data(), n * width);
      gpu::cpu::ReluGrad(x.data(), o1.data(), g2.data(), n * width);
      CHECK(g1 == g2);
      std::vector<float> db1(width), db2(width);
      b->BiasGrad(x.data(), n, width, db1.data());
      gpu::cpu::BiasGrad(x.data(), n, width, db2.data());
      CHECK(db1 == db2);
      std::vector<float> labels(n);
      for (float& y : labels) y = rng.Below(2) ? 1.0f : 0.0f;
      std::vector<float> dl1(n), dl2(n);
      CHECK(b->BceWithLogits(x.data(), labels.data(), n, 0.5f, dl1.data()) ==
            gpu::cpu::BceWithLogits(x.data(), labels.data(), n, 0.5f, dl2.data()));
      CHECK(dl1 == dl2);
      for (bool with_z : {true, false}) {
        if (!with_z && T < 2) continue;
        const size_t F = T + (with_z ? 1 : 0), iw = (with_z ? d : 0) + F * (F - 1) / 2;
        const std::vector<float> z = random(n * d), pooled = random(n * T * d), dr = random(n * iw);
        const float* zp = with_z ? z.data() : nullptr;
        std::vector<float> r1(n * iw), r2(n * iw), columns(gpu::cpu::InteractionColumnsFloats(T, d, with_z));
        b->InteractionForward(zp, pooled.data(), n, T, d, iw, r1.data());
        gpu::cpu::InteractionForward(zp, pooled.data(), n, T, d, iw, r2.data(), columns.data());
        CHECK(r1 == r2);
        std::vector<float> dz1(n * d), dz2(n * d), dp1(n * T * d), dp2(n * T * d), G(T * T);
        b->InteractionBackward(dr.data(), zp, pooled.data(), n, T, d, iw, with_z ? dz1.data() : nullptr, dp1.data());
        gpu::cpu::InteractionBackward(dr.data(), zp, pooled.data(), n, T, d, iw, with_z ? dz2.data() : nullptr,
                                      dp2.data(), G.data());
        CHECK(dz1 == dz2);
        CHECK(dp1 == dp2);
      }
    }
  }
}

TEST_CASE("a backend buffer grows, is reused, and frees itself", "[models]") {
  FakeDevice device;
  {
    gpu::Buffer a;
    float* p = a.Grow(device, 10);
    CHECK(a.Grow(device, 4) == p);  // smaller: reused
    CHECK(device.allocations == 1);
    a.Grow(device, 11);
    CHECK(device.allocations == 2);
    CHECK(device.live() == 1);  // the old one freed
    gpu::Buffer b = std::move(a);
    CHECK(a.data() == nullptr);
    const std::vector<float> host = {1, 2, 3};
    const float* up = b.Resident(device, host.data(), 3);
    CHECK(up == b.data());
    std::vector<float> back(3);
    device.Download(back.data(), up, 3);
    CHECK(back == host);
  }
  CHECK(device.live() == 0);
  CHECK(device.errors.empty());
  // On host memory Resident is the host pointer itself.
  auto cpu = gpu::MakeCpuBackend();
  gpu::Buffer h;
  const float x = 1.0f;
  CHECK(h.Resident(*cpu, &x, 1) == &x);
}

}  // namespace
}  // namespace actorrec::models
