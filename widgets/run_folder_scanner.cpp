#include "run_folder_scanner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>
#include <algorithm>

#include "run/run_files.h"
#include "run_folder_schema.h"

namespace liftlab {

namespace {

constexpr int kDebounceMs = 250;  // a burst of file events (tmp file + rename) → one re-read

QString summaryName() {
    return QString::fromLatin1(run_folder::kSummary);
}

}  // namespace

QString forkParentOf(const QString& runDir, int* forkStep) {
    if (forkStep) *forkStep = 0;
    nlohmann::json spec;
    try {  // the run folder's one reader of spec.json (run/run_files.h): bounded
        spec = read_spec_json(
                   QDir(runDir).filePath(QString::fromLatin1(run_folder::kSpec)).toStdString())
                   .json;
    } catch (const std::exception&) {
        return {};
    }
    const auto parent = spec.find("parent");
    if (parent == spec.end() || !parent->is_string() || parent->get<std::string>().empty())
        return {};
    const auto step = spec.find("fork_step");
    if (forkStep && step != spec.end() && step->is_number_integer())
        *forkStep = static_cast<int>(step->get<long long>());
    return QDir::cleanPath(
        QDir(runDir).absoluteFilePath(QString::fromStdString(parent->get<std::string>())));
}

bool RunFolderScanner::Stamp::operator==(const Stamp& o) const {
    return specTime == o.specTime && summaryTime == o.summaryTime && specSize == o.specSize &&
           summarySize == o.summarySize;
}

RunFolderScanner::Stamp RunFolderScanner::stampOf(const QString& path) {
    const QDir dir(path);
    const QFileInfo spec(dir.filePath(QString::fromLatin1(run_folder::kSpec)));
    const QFileInfo summary(dir.filePath(summaryName()));
    Stamp s;
    if (spec.exists()) {
        s.specTime = spec.lastModified();
        s.specSize = spec.size();
    }
    if (summary.exists()) {
        s.summaryTime = summary.lastModified();
        s.summarySize = summary.size();
    }
    return s;
}

RunFolderScanner::RunFolderScanner(QObject* parent)
    : QObject(parent), watcher_(new QFileSystemWatcher(this)), debounce_(new QTimer(this)) {
    debounce_->setSingleShot(true);
    debounce_->setInterval(kDebounceMs);
    connect(debounce_, &QTimer::timeout, this, [this] { scan(false); });
    connect(watcher_, &QFileSystemWatcher::directoryChanged, this,
            &RunFolderScanner::onPathChanged);
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, &RunFolderScanner::onPathChanged);
}

void RunFolderScanner::setRoot(const QString& dir) {
    if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
    if (!watcher_->files().isEmpty()) watcher_->removePaths(watcher_->files());
    runs_.clear();
    stamps_.clear();
    dirty_.clear();
    root_ = dir.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    scan(true);
}

void RunFolderScanner::setDepth(int depth) {
    depth_ = std::max(0, depth);
    scan(false);
}

void RunFolderScanner::scan(bool rereadAll) {
    debounce_->stop();
    QStringList searched;
    const QStringList found =
        root_.isEmpty() ? QStringList() : findRunFolders(root_, depth_, &searched);
    const QSet<QString> present(found.cbegin(), found.cend());
    for (auto it = runs_.begin(); it != runs_.end();) {
        if (present.contains(it.key())) {
            ++it;
            continue;
        }
        stamps_.remove(it.key());
        it = runs_.erase(it);
    }
    QStringList reread;
    for (const QString& path : found) {
        const Stamp stamp = stampOf(path);
        const bool fresh = !runs_.contains(path);
        if (fresh || rereadAll || dirty_.contains(path) || !(stamps_.value(path) == stamp)) {
            HistoryRun record;
            record.info = readRunFolder(path);
            record.parent = forkParentOf(path, &record.forkStep);
            runs_.insert(path, record);
            stamps_.insert(path, stamp);
            reread << path;
        }
    }
    dirty_.clear();
    updateWatches(reread, searched);
    Q_EMIT scanned(found, reread);
}

void RunFolderScanner::updateWatches(const QStringList& reread, const QStringList& searched) {
    QSet<QString> wantDirs(searched.cbegin(), searched.cend());
    QSet<QString> wantFiles;
    for (auto it = runs_.cbegin(); it != runs_.cend(); ++it) {
        wantDirs.insert(it.key());  // summary.json replaced by rename, new files
        const QString summary = QDir(it.key()).filePath(summaryName());
        if (QFileInfo::exists(summary)) wantFiles.insert(summary);  // rewritten in place
    }
    // A summary.json replaced by a rename is a new file: watch it afresh.
    QStringList stale;
    for (const QString& run : reread) {
        const QString summary = QDir(run).filePath(summaryName());
        if (watcher_->files().contains(summary)) stale << summary;
    }
    if (!stale.isEmpty()) watcher_->removePaths(stale);

    QStringList drop;
    for (const QString& d : watcher_->directories())
        if (!wantDirs.contains(d)) drop << d;
    for (const QString& f : watcher_->files())
        if (!wantFiles.contains(f)) drop << f;
    if (!drop.isEmpty()) watcher_->removePaths(drop);

    const QStringList haveDirs = watcher_->directories(), haveFiles = watcher_->files();
    QStringList add;
    for (const QString& d : wantDirs)
        if (!haveDirs.contains(d)) add << d;
    for (const QString& f : wantFiles)
        if (!haveFiles.contains(f)) add << f;
    if (!add.isEmpty()) watcher_->addPaths(add);
}

void RunFolderScanner::onPathChanged(const QString& path) {
    if (runs_.contains(path)) {
        dirty_.insert(path);
    } else {
        const QFileInfo fi(path);
        const QString parent = QDir::cleanPath(fi.absolutePath());
        if (fi.fileName() == summaryName() && runs_.contains(parent)) dirty_.insert(parent);
    }
    // Not restarted by later events: a run rewriting its files still updates every interval.
    if (!debounce_->isActive()) debounce_->start();
}

QStringList RunFolderScanner::watchedPaths() const {
    return watcher_->directories() + watcher_->files();
}

}  // namespace liftlab
