#include "run_history_panel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

#include "run_folder_scanner.h"
#include "run_folder_schema.h"
#include "run_history_proxy.h"

namespace liftlab {

namespace {

constexpr int kPanelIconSize = 12;    // logical pixels of the status dot and the method swatch
constexpr int kMaxColumnWidth = 220;  // cap of a column sized to its contents

QString cleanAbsolute(const QString& path) {
    return path.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

// Every row under `parent` of `model`, depth first (a parent before its forks).
void collectRows(const QAbstractItemModel* model, const QModelIndex& parent,
                 QList<QModelIndex>* out) {
    for (int r = 0; r < model->rowCount(parent); ++r) {
        const QModelIndex index = model->index(r, 0, parent);
        out->push_back(index);
        collectRows(model, index, out);
    }
}

QString pathOf(const QModelIndex& index) {
    return index.data(RunHistoryModel::kPathRole).toString();
}

}  // namespace

RunHistoryPanel::RunHistoryPanel(QWidget* parent)
    : QWidget(parent),
      filter_(new QLineEdit(this)),
      openButton_(new QPushButton(tr("Open"), this)),
      compareButton_(new QPushButton(tr("Compare"), this)),
      view_(new QTreeView(this)),
      footer_(new QLabel(this)),
      scanner_(new RunFolderScanner(this)),
      model_(new RunHistoryModel(this)),
      sorted_(new RunHistorySortProxy(this)),
      filtered_(new RunHistoryFilterProxy(this)) {
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

    sorted_->setSourceModel(model_);
    filtered_->setSourceModel(sorted_);
    view_->setModel(filtered_);
    view_->setRootIsDecorated(true);  // forks sit under their parent
    view_->setUniformRowHeights(true);
    view_->setAlternatingRowColors(true);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    view_->setIconSize(QSize(kPanelIconSize, kPanelIconSize));
    view_->setSortingEnabled(true);
    view_->sortByColumn(ColDate, Qt::DescendingOrder);
    QHeaderView* header = view_->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(ColMethods, QHeaderView::Stretch);
    view_->installEventFilter(this);
    layout->addWidget(view_, 1);

    footer_->setForegroundRole(QPalette::PlaceholderText);
    footer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(footer_);

    setAcceptDrops(true);
    setMinimumSize(480, 180);

    connect(scanner_, &RunFolderScanner::scanned, this, &RunHistoryPanel::onScanned);
    connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
        filtered_->setWords(text);
        view_->expandAll();
        updateFooter();
        updateButtons();
    });
    connect(refreshButton, &QPushButton::clicked, this, &RunHistoryPanel::refresh);
    connect(openButton_, &QPushButton::clicked, this, &RunHistoryPanel::openCurrent);
    connect(compareButton_, &QPushButton::clicked, this, &RunHistoryPanel::compareSelected);
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunHistoryPanel::updateButtons);
    connect(view_, &QTreeView::doubleClicked, this, [this](const QModelIndex& index) {
        const QString path = pathOf(index);
        if (isOpenable(path)) Q_EMIT openRequested(path);
    });
    connect(view_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QModelIndex index = view_->indexAt(pos);
        if (!index.isValid()) return;
        QItemSelectionModel* sel = view_->selectionModel();
        if (!sel->isRowSelected(index.row(), index.parent()))
            sel->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        sel->setCurrentIndex(index, QItemSelectionModel::NoUpdate);
        QMenu* menu = createContextMenu(pathOf(index));
        menu->exec(view_->viewport()->mapToGlobal(pos));
        delete menu;
    });

    updateButtons();
    updateFooter();
}

void RunHistoryPanel::setRoot(const QString& dir) {
    scanner_->setRoot(dir);
}

QString RunHistoryPanel::root() const {
    return scanner_->root();
}

void RunHistoryPanel::setScanDepth(int depth) {
    scanner_->setDepth(depth);
}

int RunHistoryPanel::scanDepth() const {
    return scanner_->depth();
}

void RunHistoryPanel::refresh() {
    scanner_->scan(true);
}

void RunHistoryPanel::onScanned(const QStringList& runs, const QStringList& reread) {
    const bool added = std::any_of(runs.begin(), runs.end(),
                                   [this](const QString& p) { return !model_->record(p); });
    // A model reset (a run added, removed or re-parented) forgets the selection: keep it by path.
    const QStringList selected = selectedRuns();
    const QModelIndex current = view_->currentIndex();
    const QString currentPath = current.isValid() ? pathOf(current) : QString();
    model_->setRuns(scanner_->runs(), reread);
    view_->expandAll();
    if (selectedRuns().isEmpty() && !selected.isEmpty()) {
        QItemSelectionModel* sel = view_->selectionModel();
        for (const QString& path : selected) {
            const QModelIndex index =
                filtered_->mapFromSource(sorted_->mapFromSource(model_->indexOfPath(path)));
            if (index.isValid())
                sel->select(index, QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
        const QModelIndex again =
            filtered_->mapFromSource(sorted_->mapFromSource(model_->indexOfPath(currentPath)));
        if (again.isValid()) sel->setCurrentIndex(again, QItemSelectionModel::NoUpdate);
    }
    if (added) {
        for (int c = 0; c <= ColBest; ++c) {
            if (c == ColMethods) continue;
            view_->resizeColumnToContents(c);
            // Long sweep labels ("cf-prox@batch_size=128") must not squeeze the methods away.
            view_->setColumnWidth(c, std::min(view_->columnWidth(c), kMaxColumnWidth));
        }
    }
    updateFooter();
    updateButtons();
}

QList<QModelIndex> RunHistoryPanel::sortedRows() const {
    QList<QModelIndex> rows;
    collectRows(sorted_, QModelIndex(), &rows);
    return rows;
}

QModelIndex RunHistoryPanel::viewIndex(int row) const {
    const QList<QModelIndex> rows = sortedRows();
    return row >= 0 && row < rows.size() ? filtered_->mapFromSource(rows[row]) : QModelIndex();
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
    if (root().isEmpty()) {
        footer_->setText(tr("No run folder chosen"));
        return;
    }
    const int n = runCount(), shown = visibleRunCount();
    if (n == 0) {
        footer_->setText(tr("No runs in %1").arg(QDir::toNativeSeparators(root())));
        return;
    }
    QString text = (n == 1 ? tr("1 run in %1") : tr("%1 runs in %2").arg(n))
                       .arg(QDir::toNativeSeparators(root()));
    if (shown != n) text += tr(" · %1 shown").arg(shown);
    footer_->setText(text);
}

int RunHistoryPanel::runCount() const {
    return model_->runCount();
}

int RunHistoryPanel::visibleRunCount() const {
    QList<QModelIndex> rows;
    collectRows(filtered_, QModelIndex(), &rows);
    return rows.size();
}

QString RunHistoryPanel::runAt(int row) const {
    const QList<QModelIndex> rows = sortedRows();
    return row >= 0 && row < rows.size() ? pathOf(rows[row]) : QString();
}

bool RunHistoryPanel::isRowHidden(int row) const {
    return !viewIndex(row).isValid();
}

QString RunHistoryPanel::cellText(int row, int column) const {
    const QList<QModelIndex> rows = sortedRows();
    if (row < 0 || row >= rows.size()) return {};
    return rows[row].siblingAtColumn(column).data().toString();
}

QRect RunHistoryPanel::rowRect(int row) {
    const QModelIndex index = viewIndex(row);
    if (!index.isValid()) return {};
    view_->scrollTo(index);
    return view_->visualRect(index);
}

void RunHistoryPanel::setRowSelected(int row, bool selected) {
    const QModelIndex index = viewIndex(row);
    if (!index.isValid()) return;
    view_->selectionModel()->select(
        index, (selected ? QItemSelectionModel::Select : QItemSelectionModel::Deselect) |
                   QItemSelectionModel::Rows);
}

RunFolderInfo RunHistoryPanel::runInfo(const QString& path) const {
    const HistoryRun* record = model_->record(cleanAbsolute(path));
    return record ? record->info : RunFolderInfo();
}

QString RunHistoryPanel::parentRun(const QString& path) const {
    return model_->parentRun(cleanAbsolute(path));
}

void RunHistoryPanel::setFilterText(const QString& text) {
    filter_->setText(text);
}

QString RunHistoryPanel::filterText() const {
    return filter_->text();
}

void RunHistoryPanel::selectRun(const QString& path) {
    const QModelIndex source = sorted_->mapFromSource(model_->indexOfPath(cleanAbsolute(path)));
    if (!source.isValid()) return;
    if (!filtered_->mapFromSource(source).isValid()) filter_->clear();
    const QModelIndex index = filtered_->mapFromSource(source);
    view_->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view_->scrollTo(index);
}

QStringList RunHistoryPanel::selectedRuns() const {
    QList<QModelIndex> rows;
    collectRows(filtered_, QModelIndex(), &rows);
    QStringList out;
    const QItemSelectionModel* sel = view_->selectionModel();
    for (const QModelIndex& index : rows)
        if (sel->isRowSelected(index.row(), index.parent())) out << pathOf(index);
    return out;
}

bool RunHistoryPanel::isOpenable(const QString& path) const {
    const HistoryRun* record = model_->record(path);
    return record && record->info.valid;
}

void RunHistoryPanel::openCurrent() {
    const QStringList sel = selectedRuns();
    QString path;
    const QModelIndex cur = view_->currentIndex();
    if (cur.isValid() && view_->selectionModel()->isRowSelected(cur.row(), cur.parent()))
        path = pathOf(cur);
    else if (!sel.isEmpty())
        path = sel.front();
    if (isOpenable(path)) Q_EMIT openRequested(path);
}

void RunHistoryPanel::compareSelected() {
    QStringList sel = selectedRuns();
    if (!canCompare(sel)) return;
    std::stable_sort(sel.begin(), sel.end(), [this](const QString& a, const QString& b) {
        const QDateTime ta = runInfo(a).created, tb = runInfo(b).created;
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
    static const QStringList kRunFiles{QString::fromLatin1(run_folder::kSpec),
                                       QString::fromLatin1(run_folder::kSummary),
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
    if (watched == view_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter) {
            openCurrent();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace liftlab
