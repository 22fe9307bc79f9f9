// The check of a user's TorchScript model against the experiment it is for, as soon as it is
// picked in "Your backbone / Your ICNN": its parameters, the inputs the task will give it (e.g.
// n × 1 × 28 × 28), and one forward pass on a few of them — the features it returns, or one
// finite energy per row — or the full error. It runs on a worker thread (a slow load or data
// preparation never blocks the window) and can be cancelled: a cancelled or superseded probe's
// result is dropped.
//
// probeModel() is the one place the window calls into the model check; a probe in a child
// process (with time and memory limits) replaces its body, nothing else.
#pragma once
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

namespace liftlab {

struct ModelProbeRequest {
    QString file;
    bool icnn = false;    // an ICNN energy model; else a backbone under the methods' last layer
    nlohmann::json spec;  // the experiment (its task gives the inputs, its backbone the key)
};

struct ModelProbeResult {
    bool ok = false;
    bool cancelled = false;
    QStringList names, shapes;  // the parameters, dotted names and "16 × 8" shapes
    QString inputShape;         // what forward(x) is given: "n × 1 × 28 × 28"
    QString found;              // "32 features per sample", "one finite energy per row"
    qint64 featureDim = 0;      // a backbone's feature width
    QString error;              // the full message when the model was refused
};

// The whole check, synchronously; `cancel` is looked at between its phases and during the data
// preparation (then the result is `cancelled`).
ModelProbeResult probeModel(const ModelProbeRequest& request, const std::atomic<bool>& cancel);

class ModelProbe : public QObject {
    Q_OBJECT
public:
    explicit ModelProbe(QObject* parent = nullptr);
    ~ModelProbe() override;

    // Starts a probe on a worker; a probe still going on is cancelled and its result dropped.
    void start(const ModelProbeRequest& request);
    void cancel();
    bool isRunning() const { return running_; }

Q_SIGNALS:
    // On the GUI thread, for the latest start() only (not after cancel()).
    void finished(const liftlab::ModelProbeResult& result);

private:
    std::shared_ptr<std::atomic<bool>> cancel_;
    int generation_ = 0;
    bool running_ = false;
};

}  // namespace liftlab

Q_DECLARE_METATYPE(liftlab::ModelProbeResult)
