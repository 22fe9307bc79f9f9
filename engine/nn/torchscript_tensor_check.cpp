#include "nn/torchscript_tensor_check.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <sstream>

namespace liftlab {

std::string tensor_problem(const std::string& name, const at::Tensor& t) {
    if (!t.defined()) return {};
    if (t.layout() != at::kStrided)
        return "'" + name + "' is a sparse tensor (LiftLab reads dense ones)";
    if (!t.has_storage() || t.numel() == 0) return {};
    __int128 last = t.storage_offset();  // the last element the view reaches
    bool negative = t.storage_offset() < 0;
    for (int64_t d = 0; d < t.dim(); ++d) {
        negative = negative || t.stride(d) < 0;
        last += static_cast<__int128>(t.size(d) - 1) * t.stride(d);
    }
    const __int128 bytes = (last + 1) * static_cast<__int128>(t.element_size());
    if (negative || bytes > static_cast<__int128>(t.storage().nbytes())) {
        std::ostringstream s;
        s << "tensor '" << name << "' of sizes " << t.sizes() << ", strides " << t.strides()
          << " and offset " << t.storage_offset() << " reaches past its storage of "
          << t.storage().nbytes() << " bytes";
        return s.str();
    }
    return {};
}

std::string module_tensor_problem(const torch::jit::Module& module) {
    std::string problem;
    auto visit = [&](const std::string& name, const c10::IValue& v) {
        if (v.isTensor()) {
            problem = tensor_problem(name, v.toTensor());
        } else if (v.isList()) {
            for (const auto& e : v.toListRef())
                if (problem.empty() && e.isTensor()) problem = tensor_problem(name, e.toTensor());
        } else if (v.isTuple()) {
            for (const auto& e : v.toTupleRef().elements())
                if (problem.empty() && e.isTensor()) problem = tensor_problem(name, e.toTensor());
        } else if (v.isGenericDict()) {
            for (const auto& e : v.toGenericDict())
                if (problem.empty() && e.value().isTensor())
                    problem = tensor_problem(name, e.value().toTensor());
        }
    };
    for (const auto& a : module.named_attributes(/*recurse=*/true)) {
        visit(a.name, a.value);
        if (!problem.empty()) return problem;
    }
    std::function<void(torch::jit::Block*)> constants = [&](torch::jit::Block* block) {
        for (auto* node : block->nodes()) {
            if (!problem.empty()) return;
            if (node->kind() == c10::prim::Constant && node->outputs().size() == 1)
                if (const auto value = torch::jit::toIValue(node->output()))
                    visit("a constant of the code", *value);
            for (auto* inner : node->blocks()) constants(inner);
        }
    };
    for (const auto& sub : module.modules())
        for (const auto& method : sub.get_methods()) {
            constants(method.graph()->block());
            if (!problem.empty()) return problem;
        }
    return problem;
}

}  // namespace liftlab
