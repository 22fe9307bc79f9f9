#include "run_history_panel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QTimer>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "method_colors.h"
#include "run_folder_schema.h"

namespace liftlab {

namespace {

constexpr int kPathRole = Qt::UserRole;      // the run folder, on the ColRun cell
constexpr int kSortRole = Qt::UserRole + 1;  // per cell: what the column sorts by
constexpr int kDebounceMs = 250;      // a burst of file events (tmp file + rename) → one re-read
constexpr int kIconSize = 12;         // logical pixels of the status dot and the method swatch
constexpr int kMaxColumnWidth = 220;  // cap of a column sized to its contents

const QString kSummaryName = QString::fromLatin1(run_folder::kSummary);

// A run's status from the runner (RunStatus) or the browser's own ("stalled", "invalid", …).
QColor statusColor(const QString& status) {
    const auto run = parse_run_status(status.toStdString());
    if (run == RunStatus::Ok) return QColor(0x2c, 0xa0, 0x2c);
    if (run == RunStatus::Running) return QColor(0x1f, 0x77, 0xb4);
    if (run == RunStatus::Cancelled || status == QLatin1String("stalled"))
        return QColor(0xe6, 0x9f, 0x00);
    if ((run && stopped_early(*run)) || status == QLatin1String("invalid"))
        return QColor(0xd6, 0x27, 0x28);
    return QColor(0x9e, 0x9e, 0x9e);
}

// A transparent kIconSize square drawn at twice the resolution (sharp on high-dpi screens).
QPixmap iconCanvas() {
    const qreal dpr = 2.0;
    QPixmap pm(int(kIconSize * dpr), int(kIconSize * dpr));
    pm.setDevicePixelRatio(dpr);
    pm.fill(Qt::transparent);
    return pm;
}

// A filled dot; a ring for folders whose status is not known (incomplete, invalid).
QIcon statusIcon(const QString& status) {
    QPixmap pm = iconCanvas();
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor c = statusColor(status);
    const bool ring = status == QLatin1String("incomplete") || status == QLatin1String("invalid");
    // A white halo keeps the dot visible on the selection highlight (blue on blue otherwise).
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(255, 255, 255, 220));
    p.drawEllipse(QRectF(0.8, 0.8, kIconSize - 1.6, kIconSize - 1.6));
    p.setPen(QPen(ring ? c : c.darker(125), ring ? 1.6 : 0.8));
    p.setBrush(ring ? QBrush(Qt::NoBrush) : QBrush(c));
    p.drawEllipse(QRectF(2.0, 2.0, kIconSize - 4.0, kIconSize - 4.0));
    p.end();
    return QIcon(pm);
}

QIcon swatchIcon(const QColor& color) {
    QPixmap pm = iconCanvas();
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(color.darker(130), 0.8));
    p.setBrush(color);
    p.drawRoundedRect(QRectF(2.0, 2.5, kIconSize - 4.0, kIconSize - 5.0), 1.5, 1.5);
    return QIcon(pm);
}

QString lossText(double v) {
    return QString::number(v, 'g', 4);
}

// Sorts by each cell's kSortRole (numbers as numbers), ties broken by date, then path.
class RunItem : public QTreeWidgetItem {
public:
    RunItem() : QTreeWidgetItem(UserType) {}
    bool operator<(const QTreeWidgetItem& other) const override {
        const int col = treeWidget() ? treeWidget()->sortColumn() : RunHistoryPanel::ColDate;
        const QVariant a = data(col, kSortRole), b = other.data(col, kSortRole);
        if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double) {
            if (a.toDouble() != b.toDouble()) return a.toDouble() < b.toDouble();
        } else if (a.typeId() == QMetaType::QString && b.typeId() == QMetaType::QString) {
            const int c = QString::compare(a.toString(), b.toString(), Qt::CaseInsensitive);
            if (c != 0) return c < 0;
        }
        const double ta = data(RunHistoryPanel::ColDate, kSortRole).toDouble();
        const double tb = other.data(RunHistoryPanel::ColDate, kSortRole).toDouble();
        if (ta != tb) return ta < tb;
        return data(RunHistoryPanel::ColRun, kPathRole).toString() <
               other.data(RunHistoryPanel::ColRun, kPathRole).toString();
    }
};

QString cleanAbsolute(const QString& path) {
    return path.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

}  // namespace

bool RunHistoryPanel::Stamp::operator==(const Stamp& o) const {
    return specTime == o.specTime && summaryTime == o.summaryTime && specSize == o.specSize &&
           summarySize == o.summarySize;
}

RunHistoryPanel::Stamp RunHistoryPanel::stampOf(const QString& path) {
    const QDir dir(path);
    const QFileInfo spec(dir.filePath(QString::fromLatin1(run_folder::kSpec)));
    const QFileInfo summary(dir.filePath(kSummaryName));
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

RunHistoryPanel::RunHistoryPanel(QWidget* parent)
    : QWidget(parent),
      filter_(new QLineEdit(this)),
      openButton_(new QPushButton(tr("Open"), this)),
      compareButton_(new QPushButton(tr("Compare"), this)),
      tree_(new QTreeWidget(this)),
      footer_(new QLabel(this)),
      watcher_(new QFileSystemWatcher(this)),
      debounce_(new QTimer(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);

    auto* bar = new QHBoxLayout;
    filter_->setPlaceholderText(tr("Filter by run, task, method or status"));
    filter_->setClearButtonEnabled(true);
    auto* refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setToolTip(tr("Scan the folder again"));
    openButton_->setToolTip(tr("Open the selected run (or double-click it, or press Enter)"));
    compareButton_->setToolTip(
        tr("Compare the selected runs (two or three): each method keeps its colour, the runs "
           "are told apart by line style"));
    bar->addWidget(filter_, 1);
    bar->addWidget(refreshButton);
    bar->addWidget(openButton_);
    bar->addWidget(compareButton_);
    layout->addLayout(bar);

    tree_->setColumnCount(ColBest + 1);
    tree_->setHeaderLabels({tr("run"), tr("task"), tr("model"), tr("methods"), tr("seeds"),
                            tr("steps"), tr("status"), tr("date"), tr("best result")});
    tree_->setRootIsDecorated(false);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
    tree_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tree_->setContextMenuPolicy(Qt::CustomContextMenu);
    tree_->setIconSize(QSize(kIconSize, kIconSize));
    tree_->setSortingEnabled(true);
    tree_->sortByColumn(ColDate, Qt::DescendingOrder);
    for (int c : {ColSeeds, ColSteps})
        tree_->headerItem()->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    QHeaderView* header = tree_->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(ColMethods, QHeaderView::Stretch);
    tree_->installEventFilter(this);
    layout->addWidget(tree_, 1);

    footer_->setForegroundRole(QPalette::PlaceholderText);
    footer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(footer_);

    setAcceptDrops(true);
    setMinimumSize(480, 180);

    debounce_->setSingleShot(true);
    debounce_->setInterval(kDebounceMs);
    connect(debounce_, &QTimer::timeout, this, [this] { sync(false); });
    connect(watcher_, &QFileSystemWatcher::directoryChanged, this, &RunHistoryPanel::onPathChanged);
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, &RunHistoryPanel::onPathChanged);
    connect(filter_, &QLineEdit::textChanged, this, [this] { applyFilter(); });
    connect(refreshButton, &QPushButton::clicked, this, &RunHistoryPanel::refresh);
    connect(openButton_, &QPushButton::clicked, this, &RunHistoryPanel::openCurrent);
    connect(compareButton_, &QPushButton::clicked, this, &RunHistoryPanel::compareSelected);
    connect(tree_, &QTreeWidget::itemSelectionChanged, this, &RunHistoryPanel::updateButtons);
    connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
        const QString path = item ? item->data(ColRun, kPathRole).toString() : QString();
        if (isOpenable(path)) Q_EMIT openRequested(path);
    });
    connect(tree_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QTreeWidgetItem* item = tree_->itemAt(pos);
        if (!item) return;
        if (!item->isSelected()) {
            tree_->clearSelection();
            item->setSelected(true);
        }
        tree_->setCurrentItem(item, 0, QItemSelectionModel::NoUpdate);
        QMenu* menu = createContextMenu(item->data(ColRun, kPathRole).toString());
        menu->exec(tree_->viewport()->mapToGlobal(pos));
        delete menu;
    });

    updateButtons();
    updateFooter();
}

void RunHistoryPanel::setRoot(const QString& dir) {
    const QString clean = cleanAbsolute(dir);
    if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
    if (!watcher_->files().isEmpty()) watcher_->removePaths(watcher_->files());
    tree_->clear();
    items_.clear();
    infos_.clear();
    stamps_.clear();
    dirty_.clear();
    root_ = clean;
    sync(true);
}

void RunHistoryPanel::setScanDepth(int depth) {
    depth_ = std::max(0, depth);
    sync(false);
}

void RunHistoryPanel::refresh() {
    sync(true);
}

void RunHistoryPanel::sync(bool rereadAll) {
    debounce_->stop();
    QStringList searched;
    const QStringList runs =
        root_.isEmpty() ? QStringList() : findRunFolders(root_, depth_, &searched);
    const QSet<QString> present(runs.cbegin(), runs.cend());
    for (auto it = items_.begin(); it != items_.end();) {
        if (present.contains(it.key())) {
            ++it;
            continue;
        }
        delete it.value();
        infos_.remove(it.key());
        stamps_.remove(it.key());
        it = items_.erase(it);
    }

    // Sorting once at the end, not after every cell.
    tree_->setSortingEnabled(false);
    bool added = false;
    QStringList reread;
    for (const QString& path : runs) {
        const Stamp stamp = stampOf(path);
        QTreeWidgetItem* item = items_.value(path);
        const bool fresh = item == nullptr;
        if (fresh) {
            item = new RunItem;
            tree_->addTopLevelItem(item);
            items_.insert(path, item);
            added = true;
        }
        if (fresh || rereadAll || dirty_.contains(path) || !(stamps_.value(path) == stamp)) {
            const RunFolderInfo info = readRunFolder(path);
            infos_.insert(path, info);
            stamps_.insert(path, stamp);
            updateRow(item, info);
            reread << path;
        }
    }
    dirty_.clear();
    tree_->setSortingEnabled(true);  // re-sorts by the header's current sort column

    updateWatches(reread, searched);
    applyFilter();
    if (added) {
        for (int c = 0; c <= ColBest; ++c) {
            if (c == ColMethods) continue;
            tree_->resizeColumnToContents(c);
            // Long sweep labels ("cf-prox@batch_size=128") must not squeeze the methods away.
            tree_->setColumnWidth(c, std::min(tree_->columnWidth(c), kMaxColumnWidth));
        }
    }
    updateButtons();
}

void RunHistoryPanel::updateRow(QTreeWidgetItem* item, const RunFolderInfo& info) {
    // The folder's name without the timestamp the date column shows; "#2" for a "-2" suffix.
    const QString folder = QFileInfo(info.path).fileName();
    QString prefix, shown = folder;
    if (timestampFromFolderName(folder, &prefix).isValid()) {
        static const QRegularExpression suffix(QStringLiteral("-\\d{6}-(\\d+)$"));
        const QRegularExpressionMatch m = suffix.match(folder);
        shown = m.hasMatch() ? tr("%1 #%2").arg(prefix, m.captured(1)) : prefix;
    }
    item->setText(ColRun, shown);
    item->setData(ColRun, kPathRole, info.path);
    item->setData(ColRun, kSortRole, folder);
    QString tip = info.path;
    if (!info.error.isEmpty()) tip += QStringLiteral("\n") + info.error;
    item->setToolTip(ColRun, tip);

    item->setText(ColTask, info.taskKind);
    item->setData(ColTask, kSortRole, info.taskKind);

    const QString model =
        info.modelFile.isEmpty() ? tr("built-in") : QFileInfo(info.modelFile).fileName();
    item->setText(ColModel, model);
    item->setData(ColModel, kSortRole, model);
    item->setToolTip(ColModel,
                     info.modelFile.isEmpty() ? tr("the preset's own model") : info.modelFile);

    QString methods = info.methods.join(QStringLiteral(", "));
    if (!info.sweepKey.isEmpty()) methods += tr("  × %1").arg(info.sweepKey);
    item->setText(ColMethods, methods);
    item->setData(ColMethods, kSortRole, methods);
    QString methodsTip = info.methods.join(QStringLiteral("\n"));
    if (!info.sweepKey.isEmpty())
        methodsTip +=
            tr("\nsweep over %1: %n value(s)", nullptr, info.sweepValues).arg(info.sweepKey);
    item->setToolTip(ColMethods, methodsTip);

    const bool known = info.valid;
    item->setText(ColSeeds, known ? seedsText(info.seedValues) : QString());
    item->setToolTip(ColSeeds, tr("%n seed(s)", nullptr, info.seeds));
    item->setData(ColSeeds, kSortRole, double(info.seeds));
    item->setText(ColSteps, known ? QString::number(info.steps) : QString());
    item->setData(ColSteps, kSortRole, double(info.steps));
    for (int c : {ColSeeds, ColSteps}) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);

    QString status = info.status;
    if (parse_run_status(status.toStdString()) == RunStatus::Running && info.runsTotal > 0)
        status = tr("running %1/%2").arg(info.runsDone).arg(info.runsTotal);
    item->setText(ColStatus, status);
    item->setIcon(ColStatus, statusIcon(info.status));
    item->setData(ColStatus, kSortRole, info.status);
    item->setToolTip(ColStatus,
                     info.error.isEmpty()
                         ? tr("%1 of %2 runs finished").arg(info.runsDone).arg(info.runsTotal)
                         : info.error);

    item->setText(ColDate, info.created.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    item->setToolTip(ColDate, info.created.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    item->setData(ColDate, kSortRole,
                  info.created.isValid() ? double(info.created.toMSecsSinceEpoch()) : 0.0);

    QString best;
    double value = 0;
    if (bestFinalResult(info, &best, &value)) {
        // Classification runs are ranked by accuracy (ce's cross-entropy and the squared losses
        // are not comparable), the others by test loss.
        const bool accuracy = info.bestMetric == QLatin1String("test_accuracy");
        item->setText(ColBest, accuracy ? tr("acc %1  %2").arg(lossText(value), best)
                                        : tr("%1  %2").arg(lossText(value), best));
        item->setIcon(ColBest, swatchIcon(methodColor(best)));
        // Ascending order lists the best first: lowest loss, highest accuracy (negated).
        item->setData(ColBest, kSortRole, accuracy ? -value : value);
        // Every method, best first: the mean over seeds of the final value.
        QList<QPair<double, QString>> all;
        for (auto it = info.bestFinal.cbegin(); it != info.bestFinal.cend(); ++it)
            all.append({accuracy ? -it.value() : it.value(), it.key()});
        std::sort(all.begin(), all.end());
        for (auto& entry : all)
            if (accuracy) entry.first = -entry.first;
        QStringList lines{tr("mean final %1 over seeds:").arg(info.bestMetric)};
        for (const auto& [v, m] : all) lines << QStringLiteral("%1\t%2").arg(m, lossText(v));
        item->setToolTip(ColBest, lines.join(QStringLiteral("\n")));
    } else {
        item->setText(ColBest, QString());
        item->setIcon(ColBest, QIcon());
        item->setData(ColBest, kSortRole, std::numeric_limits<double>::infinity());
        item->setToolTip(ColBest, QString());
    }

    // A folder that cannot be opened is listed greyed, with the reason in the tooltips.
    const QBrush fg = info.valid ? QBrush() : palette().brush(QPalette::Disabled, QPalette::Text);
    for (int c = 0; c <= ColBest; ++c) {
        item->setForeground(c, fg);
        if (!info.valid) item->setToolTip(c, tip);
    }
}

void RunHistoryPanel::updateWatches(const QStringList& reread, const QStringList& searched) {
    QSet<QString> wantDirs(searched.cbegin(), searched.cend());
    QSet<QString> wantFiles;
    for (auto it = items_.cbegin(); it != items_.cend(); ++it) {
        wantDirs.insert(it.key());  // summary.json replaced by rename, new files
        const QString summary = QDir(it.key()).filePath(kSummaryName);
        if (QFileInfo::exists(summary)) wantFiles.insert(summary);  // rewritten in place
    }
    // A summary.json replaced by a rename is a new file: watch it afresh.
    QStringList stale;
    for (const QString& run : reread) {
        const QString summary = QDir(run).filePath(kSummaryName);
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

void RunHistoryPanel::onPathChanged(const QString& path) {
    if (items_.contains(path)) {
        dirty_.insert(path);
    } else {
        const QFileInfo fi(path);
        const QString parent = QDir::cleanPath(fi.absolutePath());
        if (fi.fileName() == kSummaryName && items_.contains(parent)) dirty_.insert(parent);
    }
    // Not restarted by later events: a run rewriting its files still updates every interval.
    if (!debounce_->isActive()) debounce_->start();
}

void RunHistoryPanel::applyFilter() {
    const QStringList words = filter_->text().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = tree_->topLevelItem(i);
        const QString path = item->data(ColRun, kPathRole).toString();
        QString haystack = QFileInfo(path).fileName() + QLatin1Char('\n') + infos_.value(path).name;
        for (int c = 0; c <= ColBest; ++c) haystack += QLatin1Char('\n') + item->text(c);
        bool match = true;
        for (const QString& w : words) match = match && haystack.contains(w, Qt::CaseInsensitive);
        item->setHidden(!match);
        if (!match && item->isSelected()) item->setSelected(false);
    }
    updateFooter();
}

void RunHistoryPanel::updateButtons() {
    const QStringList sel = selectedRuns();
    openButton_->setEnabled(sel.size() == 1 && isOpenable(sel.front()));
    compareButton_->setEnabled(canCompare(sel));
}

bool RunHistoryPanel::canCompare(const QStringList& runs) const {
    if (runs.size() < 2 || runs.size() > kMaxCompared) return false;
    return std::all_of(runs.begin(), runs.end(),
                       [this](const QString& r) { return isOpenable(r); });
}

void RunHistoryPanel::updateFooter() {
    if (root_.isEmpty()) {
        footer_->setText(tr("No run folder chosen"));
        return;
    }
    const int n = runCount(), shown = visibleRunCount();
    if (n == 0) {
        footer_->setText(tr("No runs in %1").arg(QDir::toNativeSeparators(root_)));
        return;
    }
    QString text = (n == 1 ? tr("1 run in %1") : tr("%1 runs in %2").arg(n))
                       .arg(QDir::toNativeSeparators(root_));
    if (shown != n) text += tr(" · %1 shown").arg(shown);
    footer_->setText(text);
}

int RunHistoryPanel::runCount() const {
    return tree_->topLevelItemCount();
}

int RunHistoryPanel::visibleRunCount() const {
    int n = 0;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i)
        if (!tree_->topLevelItem(i)->isHidden()) ++n;
    return n;
}

QString RunHistoryPanel::runAt(int row) const {
    const QTreeWidgetItem* item = tree_->topLevelItem(row);
    return item ? item->data(ColRun, kPathRole).toString() : QString();
}

bool RunHistoryPanel::isRowHidden(int row) const {
    const QTreeWidgetItem* item = tree_->topLevelItem(row);
    return !item || item->isHidden();
}

RunFolderInfo RunHistoryPanel::runInfo(const QString& path) const {
    return infos_.value(cleanAbsolute(path));
}

void RunHistoryPanel::setFilterText(const QString& text) {
    filter_->setText(text);
}

QString RunHistoryPanel::filterText() const {
    return filter_->text();
}

QTreeWidgetItem* RunHistoryPanel::itemFor(const QString& path) const {
    return items_.value(cleanAbsolute(path));
}

void RunHistoryPanel::selectRun(const QString& path) {
    QTreeWidgetItem* item = itemFor(path);
    if (!item) return;
    if (item->isHidden()) filter_->clear();
    tree_->clearSelection();
    tree_->setCurrentItem(item);  // selects it too
    item->setSelected(true);
    tree_->scrollToItem(item);
}

QStringList RunHistoryPanel::selectedRuns() const {
    QStringList out;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        const QTreeWidgetItem* item = tree_->topLevelItem(i);
        if (item->isSelected() && !item->isHidden())
            out << item->data(ColRun, kPathRole).toString();
    }
    return out;
}

bool RunHistoryPanel::isOpenable(const QString& path) const {
    const auto it = infos_.constFind(path);
    return it != infos_.constEnd() && it->valid;
}

void RunHistoryPanel::openCurrent() {
    const QStringList sel = selectedRuns();
    QString path;
    if (const QTreeWidgetItem* cur = tree_->currentItem(); cur && cur->isSelected())
        path = cur->data(ColRun, kPathRole).toString();
    else if (!sel.isEmpty())
        path = sel.front();
    if (isOpenable(path)) Q_EMIT openRequested(path);
}

void RunHistoryPanel::compareSelected() {
    QStringList sel = selectedRuns();
    if (!canCompare(sel)) return;
    std::stable_sort(sel.begin(), sel.end(), [this](const QString& a, const QString& b) {
        const QDateTime ta = infos_.value(a).created, tb = infos_.value(b).created;
        return ta < tb || (ta == tb && a < b);
    });
    Q_EMIT compareRequested(sel);
}

QMenu* RunHistoryPanel::createContextMenu(const QString& path) {
    const QString run = cleanAbsolute(path);
    auto* menu = new QMenu(this);
    QAction* open = menu->addAction(tr("Open"), this, [this, run] {
        if (isOpenable(run)) Q_EMIT openRequested(run);
    });
    open->setObjectName(QStringLiteral("open"));
    open->setEnabled(isOpenable(run));

    const QStringList sel = selectedRuns();
    QAction* compare =
        menu->addAction(tr("Compare the selected"), this, &RunHistoryPanel::compareSelected);
    compare->setObjectName(QStringLiteral("compare"));
    compare->setEnabled(canCompare(sel));
    menu->addSeparator();

    QAction* reveal =
        menu->addAction(tr("Open folder"), this, [this, run] { Q_EMIT revealRequested(run); });
    reveal->setObjectName(QStringLiteral("reveal"));

    // Every selected path when the menu's run is among several selected, else just this one.
    const QStringList paths = sel.size() > 1 && sel.contains(run) ? sel : QStringList{run};
    QAction* copy =
        menu->addAction(paths.size() > 1 ? tr("Copy paths") : tr("Copy path"), this, [paths] {
            QStringList native;
            for (const QString& p : paths) native << QDir::toNativeSeparators(p);
            QApplication::clipboard()->setText(native.join(QLatin1Char('\n')));
        });
    copy->setObjectName(QStringLiteral("copyPath"));
    return menu;
}

QString RunHistoryPanel::runFolderFromMime(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    static const QStringList kRunFiles{QString::fromLatin1(run_folder::kSpec), kSummaryName,
                                       QString::fromLatin1(run_folder::kMetrics)};
    for (const QUrl& url : mime->urls()) {
        if (!url.isLocalFile()) continue;
        const QFileInfo fi(url.toLocalFile());
        if (fi.isDir() && looksLikeRunFolder(fi.absoluteFilePath()))
            return cleanAbsolute(fi.absoluteFilePath());
        if (fi.isFile() && kRunFiles.contains(fi.fileName()) &&
            looksLikeRunFolder(fi.absolutePath()))
            return cleanAbsolute(fi.absolutePath());
    }
    return {};
}

void RunHistoryPanel::dragEnterEvent(QDragEnterEvent* event) {
    if (!runFolderFromMime(event->mimeData()).isEmpty())
        event->acceptProposedAction();
    else
        event->ignore();
}

void RunHistoryPanel::dragMoveEvent(QDragMoveEvent* event) {
    if (!runFolderFromMime(event->mimeData()).isEmpty())
        event->acceptProposedAction();
    else
        event->ignore();
}

void RunHistoryPanel::dropEvent(QDropEvent* event) {
    const QString run = runFolderFromMime(event->mimeData());
    if (run.isEmpty()) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    Q_EMIT openRequested(run);
}

bool RunHistoryPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == tree_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter) {
            openCurrent();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace liftlab
