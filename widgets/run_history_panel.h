// The run-history browser of the LiftLab window: every run folder under a root (runs/ by default,
// `<preset>-YYYYmmdd-HHMMSS[-N]`, see run_folder_info.h) as one row — run, task, the user's model
// file, methods, seeds, steps, status (coloured dot), date to the second, and the best mean final
// test_loss over the methods (with that method's colour) — newest first. A filter line hides rows
// that do not contain every typed word. The root is watched: a new run folder appears, and a row
// follows its summary.json while the run is going ("running 3/12" → "ok"). Opening, comparing and
// revealing are requests by signal; the panel never loads a run itself. Drops of a run folder (or
// of its spec.json, summary.json or metrics.csv) ask to open it. GUI thread only.
#pragma once
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QWidget>

#include "run_folder_info.h"

class QDragEnterEvent;
class QDragMoveEvent;
class QDropEvent;
class QFileSystemWatcher;
class QLabel;
class QLineEdit;
class QMenu;
class QMimeData;
class QPushButton;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;

namespace liftlab {

class RunHistoryPanel : public QWidget {
    Q_OBJECT
public:
    enum Column {
        ColRun,
        ColTask,
        ColModel,
        ColMethods,
        ColSeeds,
        ColSteps,
        ColStatus,
        ColDate,
        ColBest
    };
    // How many runs one comparison holds at most (their line styles: solid, dashed, dotted).
    static constexpr int kMaxCompared = 3;

    explicit RunHistoryPanel(QWidget* parent = nullptr);

    // Lists the run folders under `dir` (findRunFolders with scanDepth()) and watches it; an
    // empty string clears the list.
    void setRoot(const QString& dir);
    QString root() const { return root_; }
    // How deep below the root to look (2: root/run and root/group/run). Rescans.
    void setScanDepth(int depth);
    int scanDepth() const { return depth_; }
    // Rescans the root and re-reads every folder.
    Q_SLOT void refresh();

    // Rows in display order (newest first unless the user sorted by another column). Rows hidden
    // by the filter are counted and returned too; visibleRunCount() counts the shown ones.
    int runCount() const;
    int visibleRunCount() const;
    QString runAt(int row) const;  // the folder path; empty for a row out of range
    bool isRowHidden(int row) const;
    // What was read from the folder (valid = false for an unknown path).
    RunFolderInfo runInfo(const QString& path) const;

    void setFilterText(const QString& text);
    QString filterText() const;

    // Selects only this run (clearing the filter if it hides it) and scrolls to it.
    void selectRun(const QString& path);
    QStringList selectedRuns() const;  // in display order

    // The run folder named by dropped data: a local directory URL that looksLikeRunFolder, or a
    // spec.json / summary.json / metrics.csv inside one; "" when there is none.
    static QString runFolderFromMime(const QMimeData* mime);

    // The context menu of a row (Open, Compare, Open folder, Copy path) for `path`; the caller
    // owns it. Public so tests can trigger its actions.
    QMenu* createContextMenu(const QString& path);

    QTreeWidget* tree() const { return tree_; }
    QLineEdit* filterEdit() const { return filter_; }
    QPushButton* openButton() const { return openButton_; }
    QPushButton* compareButton() const { return compareButton_; }

Q_SIGNALS:
    void openRequested(const QString& path);
    // Two or three runs (kMaxCompared), the oldest first.
    void compareRequested(const QStringList& runs);
    // "Open folder": the application shows the folder in the file manager.
    void revealRequested(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Stamp {
        QDateTime specTime, summaryTime;
        qint64 specSize = -1, summarySize = -1;
        bool operator==(const Stamp& o) const;
    };
    static Stamp stampOf(const QString& path);

    void sync(bool rereadAll);
    void updateRow(QTreeWidgetItem* item, const RunFolderInfo& info);
    void updateWatches(const QStringList& runs, const QStringList& searched);
    void onPathChanged(const QString& path);
    void applyFilter();
    void updateButtons();
    void updateFooter();
    void openCurrent();
    void compareSelected();
    bool isOpenable(const QString& path) const;
    bool canCompare(const QStringList& runs) const;
    QTreeWidgetItem* itemFor(const QString& path) const;

    QLineEdit* filter_;
    QPushButton* openButton_;
    QPushButton* compareButton_;
    QTreeWidget* tree_;
    QLabel* footer_;
    QFileSystemWatcher* watcher_;
    QTimer* debounce_;

    QString root_;
    int depth_ = 2;
    QMap<QString, QTreeWidgetItem*> items_;  // by path
    QMap<QString, RunFolderInfo> infos_;
    QMap<QString, Stamp> stamps_;
    QSet<QString> dirty_;  // run folders a watcher signal named since the last sync
};

}  // namespace liftlab
