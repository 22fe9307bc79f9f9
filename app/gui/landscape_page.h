// The Landscape tab of the lab window (LandscapePage): the θ-space and lifted-space loss landscapes
// of an ICNN run with checkpoint trajectories (training/icnn_landscape.h), computed on a worker
// thread (LandscapeWorker) with progress and Cancel — of a finished or opened run folder, or of a
// run that is still training ("Landscape at this step": the plane through the latest checkpoint it
// has written, while the training goes on). Cached landscapes open at once. GUI thread only.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "landscape_worker.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSettings;
class QSlider;
class QSpinBox;

namespace liftlab {

class LandscapePanel;

class LandscapePage : public QWidget {
    Q_OBJECT
public:
    explicit LandscapePage(QWidget* parent = nullptr);
    ~LandscapePage() override;

    LandscapePanel* panel() const { return panel_; }
    bool hasLandscape() const { return hasLandscape_; }

    // The run whose landscapes are computed (an ICNN run with trajectories).
    void setRun(const QString& runDir, const QStringList& methods, const QList<quint64>& seeds);
    // The same from a run folder: its seeds and the methods with trajectories; an unreadable
    // folder or one without trajectories leaves the tab without a run.
    void setRunFolder(const QString& runDir);
    QString run() const { return run_; }
    // With the tab's settings; false when it cannot start (no run, or one is computing).
    bool compute();
    // The landscapes of a run that is still training, at the latest checkpoint it has written
    // (its folder's trajectories; the centre method as chosen): false (and why in `whyNot`) when
    // the folder has no trajectory yet. The training goes on meanwhile.
    bool computeLive(const QString& runDir, QString* whyNot);
    void cancel();
    bool isComputing() const { return worker_->isRunning(); }
    QString status() const;
    // Directions and grid sizes kept between sessions (QSettings "panels/landscape*").
    void saveSettings(QSettings& settings) const;
    void restoreSettings(const QSettings& settings);

Q_SIGNALS:
    void progress(double fraction);
    void done(const QString& message, bool ok);

private:
    void setBusy(bool busy);
    void onFinished(const QVector<liftlab::LandscapeSideResult>& sides);

    LandscapeWorker* worker_;
    QString run_;
    QString runDirHint_;  // the shown run, with or without trajectories
    bool live_ = false;   // the computation in progress is of a run still training
    bool hasLandscape_ = false;
    LandscapePanel* panel_ = nullptr;
    QComboBox* method_ = nullptr;
    QComboBox* seed_ = nullptr;
    QComboBox* directions_ = nullptr;
    QSpinBox* gridTheta_ = nullptr;
    QSpinBox* gridLifted_ = nullptr;
    QPushButton* compute_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QSlider* timeline_ = nullptr;
    QLabel* status_ = nullptr;
    QVector<double> steps_;
};

}  // namespace liftlab
