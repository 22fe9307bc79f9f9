#include "landscape_worker.h"

#include <QThread>
#include <exception>

#include "core/activity.h"
#include "core/error_text.h"
#include "training/icnn_landscape.h"
#include "worker_priority.h"

namespace liftlab {

LandscapeWorker::LandscapeWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<liftlab::LandscapeSideResult>();
    qRegisterMetaType<QVector<liftlab::LandscapeSideResult>>();
}

LandscapeWorker::~LandscapeWorker() {
    if (thread_) {
        cancel_ = true;
        thread_->wait();
    }
}

void LandscapeWorker::cancel() {
    cancel_ = true;
}

bool LandscapeWorker::start(const LandscapeRequest& request) {
    if (thread_) return false;
    cancel_ = false;
    auto work = [this, request] {
        lowerCurrentThreadPriority();  // the window's thread comes first
        // Long steps inside (a model's set-up, evaluation chunks) see cancel() too.
        const StopScope stopScope(&cancel_);
        QVector<LandscapeSideResult> sides;
        QString error;
        bool wasCancelled = false;
        std::vector<bool> spaces;
        if (request.theta) spaces.push_back(true);
        if (request.lifted) spaces.push_back(false);
        try {
            for (size_t i = 0; i < spaces.size(); ++i) {
                RunLandscapeOptions o;
                o.space = spaces[i] ? "theta" : "lifted";
                o.directions = request.directions.toStdString();
                o.method = request.method.toStdString();
                o.seed = request.seed;
                o.grid = spaces[i] ? request.gridTheta : request.gridLifted;
                o.direction_seed = request.directionSeed;
                const double n = static_cast<double>(spaces.size());
                const RunLandscape l =
                    run_landscape(request.runDir.toStdString(), o, [&, i](double f) {
                        const double total = (static_cast<double>(i) + f) / n;
                        QMetaObject::invokeMethod(
                            this, [this, total] { Q_EMIT progress(total); }, Qt::QueuedConnection);
                        return !cancel_.load();
                    });
                LandscapeSideResult s;
                s.theta = spaces[i];
                s.method = QString::fromStdString(l.method);
                s.kind = QString::fromStdString(l.kind);
                s.nAlpha = l.grid.n_alpha;
                s.nBeta = l.grid.n_beta;
                s.alphaMin = l.grid.range.alpha_min;
                s.alphaMax = l.grid.range.alpha_max;
                s.betaMin = l.grid.range.beta_min;
                s.betaMax = l.grid.range.beta_max;
                s.loss = QVector<double>(l.grid.loss.begin(), l.grid.loss.end());
                for (const auto& [label, pts] : l.trajectories) {
                    const QString key = QString::fromStdString(label);
                    const auto& st = l.trajectory_steps.at(label);
                    for (size_t k = 0; k < pts.size(); ++k) {
                        s.steps[key].push_back(k < st.size() ? static_cast<double>(st[k]) : k);
                        s.alpha[key].push_back(pts[k][0]);
                        s.beta[key].push_back(pts[k][1]);
                    }
                }
                s.centerLoss = l.center_loss;
                s.seconds = l.seconds;
                s.parameters = l.parameters;
                s.fromCache = l.from_cache;
                sides.push_back(s);
            }
        } catch (const LandscapeCancelled&) {
            wasCancelled = true;
        } catch (const Stopped&) {
            wasCancelled = true;
        } catch (const std::exception& e) {
            error = QString::fromStdString(error_message(e));
        }
        QMetaObject::invokeMethod(
            this,
            [this, sides, error, wasCancelled] {
                if (thread_) {
                    thread_->wait();
                    thread_.reset();
                }
                if (wasCancelled)
                    Q_EMIT cancelled();
                else if (!error.isEmpty())
                    Q_EMIT failed(error);
                else
                    Q_EMIT finished(sides);
            },
            Qt::QueuedConnection);
    };
    thread_.reset(QThread::create(work));
    thread_->setObjectName(QStringLiteral("liftlab-landscape"));
    thread_->start();
    return true;
}

}  // namespace liftlab
