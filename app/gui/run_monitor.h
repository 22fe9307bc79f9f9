// Follows the running experiment for the lab window: its points go to the curves and the panels,
// its statuses and progress to the status bar, its end to the run history and the panels (the
// run folder read back). The window starts and stops runs; this class only shows them.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>
#include <vector>

#include "session_values.h"

namespace liftlab {

class LiveCurves;
struct ExperimentSpec;
struct RunFolderData;
class RunControls;
class RunHistoryPanel;
class RunStatusBar;
class RunView;
class TrainingSession;

class RunMonitor : public QObject {
    Q_OBJECT
public:
    struct Parts {
        TrainingSession* session;
        RunView* view;
        LiveCurves* curves;
        RunStatusBar* status;
        RunHistoryPanel* history;
        RunControls* controls;
    };
    RunMonitor(const Parts& parts, QObject* parent);
    // A run of `spec` starts: the curves' legend in the spec's order, the panels cleared.
    void begin(const ExperimentSpec& spec, const QString& title);
    // Opened run folders — one, or two or three compared (run A first) — in the curves, the
    // panels and the history; the curves keep their metric when the runs log it, else show
    // `fallbackMetric`. The metric box lists the shown runs' metrics only. Returns the title.
    QString showOpened(const std::vector<std::shared_ptr<const RunFolderData>>& runs,
                       const QStringList& dirs, const QString& fallbackMetric);

Q_SIGNALS:
    // The run is over and its outcome shown. `runDir` is its folder ("" when it failed or wrote
    // none); `curvesFromFolder`: the curves now show that folder (mean ± sd over its seeds).
    void ended(bool ok, const QString& runDir, bool curvesFromFolder);

private:
    void onPoints(const QVector<liftlab::SessionPoint>& points);
    void onStatus(const liftlab::SessionStatus& status);
    void onProgress(double fraction, int step, int total);
    void onFinished(const QString& status, const QString& runDir);
    void onFailed(const QString& message);
    // Reads the finished run's folder into the panels; true when its curves replaced the live
    // ones (several seeds).
    bool showRunFolder(const QString& runDir, QStringList* warnings);
    bool running() const;

    Parts p_;
};

}  // namespace liftlab
