#include "run_comparison.h"

#include <algorithm>

#include "method_colors.h"

namespace liftlab {

namespace {

std::string tagOf(size_t index) {
    return runTag(static_cast<int>(index)).toStdString();
}

}  // namespace

RunFolderData merge_compared_runs(const std::vector<std::shared_ptr<const RunFolderData>>& runs) {
    RunFolderData out;
    if (runs.empty()) return out;
    const RunFolderData& a = *runs.front();
    out.dir = a.dir;
    out.name = a.name;
    out.title = a.title;
    out.task_kind = a.task_kind;
    out.status = a.status;
    out.sweep_key = a.sweep_key;
    out.batch_size = a.batch_size;
    out.steps = a.steps;
    out.output_dim = a.output_dim;
    out.rows_per_sample = a.rows_per_sample;
    for (size_t r = 0; r < runs.size(); ++r) {
        const RunFolderData& run = *runs[r];
        const std::string tag = tagOf(r);
        const std::string letter(1, static_cast<char>('A' + r));
        const auto tagged = [&](const std::string& label) { return label + tag; };
        for (const auto& m : run.method_order) out.method_order.push_back(tagged(m));
        for (const auto& [metric, byMethod] : run.metrics)
            for (const auto& [method, steps] : byMethod)
                out.metrics[metric][tagged(method)] = steps;
        for (const auto& [method, spectra] : run.spectra) out.spectra[tagged(method)] = spectra;
        for (const auto& [key, trace] : run.traces)
            out.traces[{tagged(key.first), key.second}] = trace;
        for (const auto& [method, dwells] : run.dwells) out.dwells[tagged(method)] = dwells;
        for (const auto& [method, finals] : run.finals)
            out.finals.push_back({tagged(method), finals});
        for (const auto& w : run.warnings) out.warnings.push_back(letter + ": " + w);
        for (const auto& n : run.notes) out.notes.push_back(letter + ": " + n);
        if (run.sweep_key == out.sweep_key)
            for (const auto& [method, values] : run.sweep)
                out.sweep.push_back({tagged(method), values});
        for (const auto& [label, loss] : run.training_loss) out.training_loss[tagged(label)] = loss;
    }
    return out;
}

int last_logged_step(const RunFolderData& run) {
    int last = 0;
    for (const auto& [metric, byMethod] : run.metrics)
        for (const auto& [method, steps] : byMethod)
            if (!steps.empty()) last = std::max(last, steps.rbegin()->first);
    return last;
}

}  // namespace liftlab
