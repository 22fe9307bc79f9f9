// The scanning half of the run-history browser: the run folders under a root
// (findRunFolders, run_folder_info.h), each read once and again only when its spec.json or
// summary.json changed (size, time) or a watcher named it, and the root watched
// (QFileSystemWatcher, one re-read per burst of file events). It also reads where a forked run
// came from (spec.json "parent", "fork_step": liftlab-cli run --fork). It emits what it read; it
// shows nothing. GUI thread only.
#pragma once
#include <QDateTime>
#include <QMap>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVector>

#include "run_folder_info.h"

class QFileSystemWatcher;
class QTimer;

namespace liftlab {

// One listed run: what run_folder_info read, and its fork parent.
struct HistoryRun {
    RunFolderInfo info;
    QString parent;    // spec.json "parent" (absolute, cleaned), "" for a run from scratch
    int forkStep = 0;  // spec.json "fork_step"
};

// spec.json's "parent" (cleaned; a relative path is taken from the run folder) and "fork_step";
// "" and 0 without them or when spec.json cannot be read.
QString forkParentOf(const QString& runDir, int* forkStep = nullptr);

class RunFolderScanner : public QObject {
    Q_OBJECT
public:
    explicit RunFolderScanner(QObject* parent = nullptr);

    // Forgets everything, scans `dir` (an empty string: nothing) and watches it.
    void setRoot(const QString& dir);
    QString root() const { return root_; }
    // How deep below the root to look (2: root/run and root/group/run). Rescans.
    void setDepth(int depth);
    int depth() const { return depth_; }
    // Scans now; `rereadAll` re-reads every folder, else only new and changed ones.
    void scan(bool rereadAll);

    // Every listed run, by path.
    const QMap<QString, HistoryRun>& runs() const { return runs_; }
    // The folders and files watched now (tests).
    QStringList watchedPaths() const;

Q_SIGNALS:
    // After a scan: every run listed now (sorted by path), and which of them were read again.
    void scanned(const QStringList& runs, const QStringList& reread);

private:
    struct Stamp {
        QDateTime specTime, summaryTime;
        qint64 specSize = -1, summarySize = -1;
        bool operator==(const Stamp& o) const;
    };
    static Stamp stampOf(const QString& path);
    void updateWatches(const QStringList& reread, const QStringList& searched);
    void onPathChanged(const QString& path);

    QFileSystemWatcher* watcher_;
    QTimer* debounce_;
    QString root_;
    int depth_ = 2;
    QMap<QString, HistoryRun> runs_;
    QMap<QString, Stamp> stamps_;
    QSet<QString> dirty_;  // run folders a watcher signal named since the last scan
};

}  // namespace liftlab
