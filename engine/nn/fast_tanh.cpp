#include "nn/fast_tanh.h"

#include <ATen/Parallel.h>

#include "nn/tanh_kernel.h"

namespace liftlab {

namespace {

torch::Tensor tanh_values(const torch::Tensor& x) {
    const auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    // Elementwise, so the split across LibTorch's threads changes no value.
    at::parallel_for(0, xc.numel(), 32768, [&](int64_t begin, int64_t end) {
        tanh_kernel(in + begin, out + begin, end - begin);
    });
    return y;
}

struct FastTanh : torch::autograd::Function<FastTanh> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
        auto y = tanh_values(x);
        ctx->save_for_backward({y});
        return y;
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grad) {
        const auto y = ctx->get_saved_variables()[0];
        return {at::tanh_backward(grad[0], y)};
    }
};

}  // namespace

torch::Tensor fast_tanh(const torch::Tensor& x) {
    if (x.scalar_type() != torch::kFloat32 || !x.device().is_cpu() || x.is_sparse())
        return torch::tanh(x);
    if (!x.requires_grad() || !torch::GradMode::is_enabled()) return tanh_values(x);
    return FastTanh::apply(x);
}

}  // namespace liftlab
