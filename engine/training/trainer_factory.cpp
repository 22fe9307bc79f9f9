#include "methods/method_registry.h"
#include "spec/experiment_spec.h"
#include "training/dfiv_trainer.h"
#include "training/icnn_trainer.h"
#include "training/method_trainer.h"
#include "training/published_cpflow_trainer.h"
#include "training/trainer.h"

namespace liftlab {

std::unique_ptr<Trainer> make_trainer(const ExperimentSpec& spec, const MethodSpec& method,
                                      const Dataset& data, std::uint64_t seed) {
    switch (method_info(method.name).family) {
        case MethodFamily::Positivity:
            if (spec.icnn.architecture == "cpflow-published")
                return std::make_unique<PublishedCpFlowTrainer>(spec, method, data, seed);
            return std::make_unique<IcnnTrainer>(spec, method, data, seed);
        case MethodFamily::Dfiv:
            return std::make_unique<DfivTrainer>(spec, method, data, seed);
        case MethodFamily::Gradient:
        case MethodFamily::ClosedForm:
            break;
    }
    return std::make_unique<MethodTrainer>(spec, method, data, seed);
}

std::mutex& trainer_construction_mutex() {
    static std::mutex m;
    return m;
}

}  // namespace liftlab
