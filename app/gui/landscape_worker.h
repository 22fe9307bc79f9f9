// Computes the loss landscapes of a finished ICNN run on a worker thread (run_landscape in the
// engine: batched over cells, cached in the run folder) and hands the result to the GUI thread as
// plain Qt values. Progress is reported as it goes; cancel() stops at the next batch of cells and
// nothing partial is cached.
#pragma once
#include <QMap>
#include <QObject>
#include <QString>
#include <QVector>
#include <atomic>
#include <memory>

class QThread;

namespace liftlab {

struct LandscapeRequest {
    QString runDir;
    QString method;  // "" = the first method with a trajectory
    qint64 seed = -1;
    QString directions = QStringLiteral("pca");  // random | pca | delta-pca
    quint64 directionSeed = 0;
    int gridTheta = 41, gridLifted = 25;
    bool theta = true, lifted = true;
};

struct LandscapeSideResult {
    bool theta = true;  // θ-space, else the lifted space
    QString method, kind;
    int nAlpha = 0, nBeta = 0;
    double alphaMin = 0, alphaMax = 0, betaMin = 0, betaMax = 0;
    QVector<double> loss;
    QMap<QString, QVector<double>> steps, alpha, beta;  // per trajectory label
    double centerLoss = 0, seconds = 0;
    qint64 parameters = 0;
    bool fromCache = false;
};

class LandscapeWorker : public QObject {
    Q_OBJECT
public:
    explicit LandscapeWorker(QObject* parent = nullptr);
    ~LandscapeWorker() override;  // cancels and joins

    bool start(const LandscapeRequest& request);  // false while a computation is running
    void cancel();
    bool isRunning() const { return thread_ != nullptr; }

Q_SIGNALS:
    void progress(double fraction);
    void finished(const QVector<liftlab::LandscapeSideResult>& sides);
    void failed(const QString& message);
    void cancelled();

private:
    std::unique_ptr<QThread> thread_;
    std::atomic<bool> cancel_{false};
};

}  // namespace liftlab

Q_DECLARE_METATYPE(liftlab::LandscapeSideResult)
