#include "spec/experiment_spec.h"
#include "training/dfiv_trainer.h"
#include "training/icnn_trainer.h"
#include "training/method_trainer.h"
#include "training/published_cpflow_trainer.h"
#include "training/trainer.h"

namespace liftlab {

std::unique_ptr<Trainer> make_trainer(const ExperimentSpec& spec, const MethodSpec& method,
                                      const Dataset& data, std::uint64_t seed) {
    // dfiv, dfiv-norefit, dfiv-prox: two-stage IV regression (the spec ties them to dfiv-demand).
    if (spec.icnn.architecture == "cpflow-published")
        return std::make_unique<PublishedCpFlowTrainer>(spec, method, data, seed);
    if (is_positivity_method(method.name))
        return std::make_unique<IcnnTrainer>(spec, method, data, seed);
    if (method.name.rfind("dfiv", 0) == 0)
        return std::make_unique<DfivTrainer>(spec, method, data, seed);
    return std::make_unique<MethodTrainer>(spec, method, data, seed);
}

std::mutex& trainer_construction_mutex() {
    static std::mutex m;
    return m;
}

}  // namespace liftlab
