// LibTorch first: Qt's `slots` and `signals` macros must not meet its headers (this file is kept
// out of the unity batches for the same reason).
#include "training/model_probe.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "nn/torchscript_backbone.h"
#include "nn/torchscript_inspect.h"
#include "nn/torchscript_module.h"
#include "spec/experiment_spec.h"

#include "model_probe.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThread>
#include <algorithm>
#include <cmath>

namespace liftlab {

namespace {

// Rows the task makes for a probe: enough for one forward pass, cheap to generate or read.
constexpr int kProbeSamples = 16;

QString sizesText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (auto s : shape) parts << QString::number(s);
    return parts.isEmpty() ? QStringLiteral("scalar") : parts.join(QStringLiteral(" × "));
}

// "n × 1 × 28 × 28": the samples' shape with the batch dimension named.
QString inputShapeText(const torch::Tensor& x) {
    QString text = QStringLiteral("n");
    for (int64_t i = 1; i < x.dim(); ++i) text += QStringLiteral(" × %1").arg(x.size(i));
    return text;
}

}  // namespace

ModelProbeResult probeModel(const ModelProbeRequest& request, const std::atomic<bool>& cancel) {
    ModelProbeResult out;
    const std::string file = request.file.toStdString();
    const std::string key = request.icnn ? "icnn.script" : "backbone.script";
    try {
        // Untrusted until checked: the reading, the load and the forward pass run first in a
        // child process (engine/training/model_probe.h) under the spec's time and memory limits; a
        // file that crashes or hangs LibTorch is only refused. The checked file is then read here.
        ExperimentSpec spec = parse_spec(request.spec);
        for (const auto& p : inspect_torchscript_in_child(file, key, probe_limits(spec), &cancel)) {
            out.names << QString::fromStdString(p.name);
            out.shapes << sizesText(p.shape);
        }
        if (cancel) {
            out.cancelled = true;
            return out;
        }
        TaskSpec task = spec.task;
        task.n_train = kProbeSamples;
        task.n_test = kProbeSamples;
        const Dataset data = make_dataset(task, [&](double) { return !cancel.load(); });
        out.inputShape = inputShapeText(data.x_train);
        if (cancel) {
            out.cancelled = true;
            return out;
        }
        if (!request.icnn) {
            BackboneSpec backbone = spec.backbone;
            backbone.kind = "torchscript";
            backbone.script = file;
            backbone.init = "file";
            backbone.script_sha256.clear();
            spec.backbone = backbone;
            check_backbone_in_child(spec, data, &cancel);
            const auto loaded = load_torchscript_backbone(backbone, data);
            out.featureDim = loaded->feature_dim();
            out.found = QObject::tr("%1 features per sample").arg(out.featureDim);
        } else {
            const auto x = data.x_train.narrow(0, 0, std::min<int64_t>(4, data.n_train()));
            if (x.dim() != 2)
                throw SpecError(key, file +
                                         ": a TorchScript ICNN needs samples of n × d; this "
                                         "task's are " +
                                         inputShapeText(x).toStdString());
            spec.icnn.script = file;
            spec.icnn.script_sha256.clear();
            // The user ticks the non-negative ones after this check: for the load and the
            // forward pass, every parameter is taken as it is in the file.
            spec.icnn.constrained.clear();
            spec.icnn.constrained_regex = ".*";
            check_icnn_in_child(spec, data, &cancel);
            auto loaded = load_torchscript(file, key);
            torch::Tensor e;
            {
                torch::NoGradGuard no_grad;
                loaded.module.eval();
                try {
                    e = torchscript_forward(loaded.module, x);
                } catch (const std::runtime_error& error) {
                    throw SpecError(key, file + ": forward on " + std::to_string(x.size(0)) +
                                             " × " + std::to_string(x.size(1)) +
                                             " rows failed: " + error.what());
                }
            }
            const bool rows = (e.dim() == 1 && e.size(0) == x.size(0)) ||
                              (e.dim() == 2 && e.size(0) == x.size(0) && e.size(1) == 1);
            if (!rows)
                throw SpecError(key, file + ": forward on " + std::to_string(x.size(0)) + " × " +
                                         std::to_string(x.size(1)) + " rows returned " +
                                         sizesText(e.sizes().vec()).toStdString() +
                                         "; an ICNN returns one energy per row (n or n × 1)");
            if (!torch::isfinite(e).all().item<bool>())
                throw SpecError(key, file + ": forward returned non-finite energies");
            out.found = QObject::tr("one finite energy per row");
        }
        out.ok = true;
    } catch (const DataCancelled&) {
        out.cancelled = true;
    } catch (const ModelProbeCancelled&) {
        out.cancelled = true;
    } catch (const std::exception& e) {
        out.error = QString::fromStdString(error_message(e));
    }
    return out;
}

ModelProbe::ModelProbe(QObject* parent) : QObject(parent) {
    qRegisterMetaType<ModelProbeResult>();
}

ModelProbe::~ModelProbe() {
    cancel();  // a worker still going on ends on its own; its result goes nowhere
}

void ModelProbe::start(const ModelProbeRequest& request) {
    cancel();
    const int generation = ++generation_;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    cancel_ = flag;
    running_ = true;
    QPointer<ModelProbe> self(this);
    QThread* worker = QThread::create([self, generation, flag, request] {
        const ModelProbeResult result = probeModel(request, *flag);
        // Back on the GUI thread (the application as context: the probe may be gone by then).
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, flag, result] {
                if (!self || generation != self->generation_ || flag->load()) return;
                self->running_ = false;
                Q_EMIT self->finished(result);
            },
            Qt::QueuedConnection);
    });
    worker->setObjectName(QStringLiteral("liftlab-model-probe"));
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    worker->start();
}

void ModelProbe::cancel() {
    if (cancel_) cancel_->store(true);
    cancel_.reset();
    running_ = false;
}

}  // namespace liftlab
