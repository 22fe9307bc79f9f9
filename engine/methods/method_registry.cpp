#include "methods/method_registry.h"

#include <algorithm>
#include <stdexcept>

#include "lastlayer/last_layer.h"

namespace liftlab {

namespace {

bool positive(double v) {
    return v > 0;
}
bool non_negative(double v) {
    return v >= 0;
}
bool forgetting_factor(double v) {
    return v > 0 && v <= 1;
}

template <typename Entry>
std::string names_of(const std::vector<Entry>& entries) {
    std::string list;
    for (const auto& e : entries) list += (list.empty() ? "" : ", ") + e.name;
    return list;
}

}  // namespace

const std::vector<MethodParameter>& method_parameters() {
    static const std::vector<MethodParameter> table = {
        {"lr", &MethodSpec::lr, nullptr,
         "step size (sgd, adam; overrides the spec's optimizer lr when > 0)"},
        {"beta", &MethodSpec::beta, nullptr, "ridge strength β (on batch sums)", non_negative,
         "must be non-negative"},
        {"lambda", &MethodSpec::lambda, nullptr,
         "proximal strength λ (cf-prox) or initial precision (cf-rls)", non_negative,
         "must be non-negative"},
        {"rho", &MethodSpec::rho, nullptr, "forgetting factor ρ of cf-rls", forgetting_factor,
         "must lie in (0, 1]"},
        {"refresh_every", nullptr, &MethodSpec::refresh_every,
         "cf-full: re-solve on the whole training set every m steps", positive, "must be positive"},
        {"lambda_scale", &MethodSpec::lambda_scale, nullptr,
         "dfiv: stage ridge strength as a multiple of the samples in each solve", positive,
         "must be positive"},
        {"init_noise", &MethodSpec::init_noise, nullptr,
         "ICNN: sd of the N(0, σ²) initial perturbation of the strategy's own pre-positivity "
         "parameter (lifter: slack biases drawn N(0, σ²); softplus: θ̃ += noise; pgd: θ += noise, "
         "projected)",
         non_negative, "must be non-negative"},
    };
    return table;
}

const MethodParameter* find_method_parameter(const std::string& key) {
    for (const auto& p : method_parameters())
        if (key == p.key) return &p;
    return nullptr;
}

const char* to_string(MethodFamily family) {
    switch (family) {
        case MethodFamily::Gradient:
            return "gradient";
        case MethodFamily::ClosedForm:
            return "closed-form";
        case MethodFamily::Dfiv:
            return "dfiv";
        case MethodFamily::Positivity:
            return "positivity";
    }
    return "?";
}

const char* to_string(TaskFamily family) {
    switch (family) {
        case TaskFamily::LastLayer:
            return "last-layer";
        case TaskFamily::InstrumentalVariable:
            return "instrumental-variable";
        case TaskFamily::Icnn:
            return "icnn";
    }
    return "?";
}

bool takes_methods(TaskFamily task, MethodFamily method) {
    switch (task) {
        case TaskFamily::LastLayer:
            return method == MethodFamily::Gradient || method == MethodFamily::ClosedForm;
        case TaskFamily::InstrumentalVariable:
            return method == MethodFamily::Dfiv;
        case TaskFamily::Icnn:
            return method == MethodFamily::Positivity;
    }
    return false;
}

const std::vector<MethodInfo>& method_registry() {
    static const std::vector<MethodInfo> registry = builtin_methods();
    return registry;
}

const MethodInfo* find_method(const std::string& name) {
    const auto& r = method_registry();
    const auto it = std::find_if(r.begin(), r.end(), [&](const auto& m) { return m.name == name; });
    return it == r.end() ? nullptr : &*it;
}

const MethodInfo& method_info(const std::string& name) {
    if (const auto* m = find_method(name)) return *m;
    throw std::invalid_argument("unknown method '" + name +
                                "' (valid: " + names_of(method_registry()) + ")");
}

double method_default(const MethodInfo& info, const MethodParameter& p) {
    for (const auto& [key, value] : info.defaults)
        if (key == p.key) return value;
    return p.default_value();
}

MethodSpec default_method(const std::string& name) {
    MethodSpec m;
    m.name = name;
    m.label = name;
    const auto& info = method_info(name);
    for (const auto& [key, value] : info.defaults)
        if (const auto* p = find_method_parameter(key)) p->set(m, value);
    return m;
}

std::vector<std::string> method_names() {
    std::vector<std::string> out;
    for (const auto& m : method_registry()) out.push_back(m.name);
    return out;
}

std::vector<std::string> method_names(MethodFamily family) {
    std::vector<std::string> out;
    for (const auto& m : method_registry())
        if (m.family == family) out.push_back(m.name);
    return out;
}

std::vector<std::string> optimizer_kinds() {
    std::vector<std::string> out;
    for (const auto& m : method_registry())
        if (!m.optimizer.empty() && std::find(out.begin(), out.end(), m.optimizer) == out.end())
            out.push_back(m.optimizer);
    return out;
}

std::unique_ptr<LastLayer> make_head(const MethodSpec& method, int64_t feature_dim,
                                     int64_t outputs) {
    const MethodInfo& m = method_info(method.name);
    if (!m.make_head) throw std::invalid_argument("method '" + method.name + "' has no last layer");
    return m.make_head(method, feature_dim, outputs);
}

const std::vector<std::string>& positivity_strategy_names() {
    static const std::vector<std::string> names = method_names(MethodFamily::Positivity);
    return names;
}

const std::string& positivity_name(PositivityMap map) {
    for (const auto& m : method_registry())
        if (m.positivity == map && !m.wide) return m.name;
    throw std::logic_error(std::string("no positivity strategy of map ") +
                           std::to_string(static_cast<int>(map)) + " is registered");
}

std::shared_ptr<PositivityStrategy> make_positivity(const std::string& name, TensorShapeList shapes,
                                                    TensorShapeList free_shapes, int64_t input_dim,
                                                    const PositivityOptions& options) {
    const MethodInfo* m = find_method(name);
    if (!m || !m->make_positivity) {
        std::string valid;
        for (const auto& n : positivity_strategy_names()) valid += (valid.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown positivity strategy '" + name + "' (valid: " + valid +
                                    ")");
    }
    return m->make_positivity(std::move(shapes), std::move(free_shapes), input_dim, options);
}

const std::vector<TaskKindInfo>& task_kind_registry() {
    static const std::vector<TaskKindInfo> registry = builtin_task_kinds();
    return registry;
}

const TaskKindInfo* find_task_kind(const std::string& name) {
    const auto& r = task_kind_registry();
    const auto it = std::find_if(r.begin(), r.end(), [&](const auto& t) { return t.name == name; });
    return it == r.end() ? nullptr : &*it;
}

const TaskKindInfo& task_kind_info(const std::string& name) {
    if (const auto* t = find_task_kind(name)) return *t;
    throw std::invalid_argument("unknown task kind '" + name +
                                "' (valid: " + names_of(task_kind_registry()) + ")");
}

std::vector<std::string> task_kind_names() {
    std::vector<std::string> out;
    for (const auto& t : task_kind_registry()) out.push_back(t.name);
    return out;
}

}  // namespace liftlab
