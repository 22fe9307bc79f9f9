#include "run_queue.h"

#include <QAction>
#include <QKeySequence>

namespace liftlab {

RunQueue::RunQueue(QWidget* parent) : QListWidget(parent) {
    setObjectName(QStringLiteral("queueList"));
    setMaximumHeight(90);
    setToolTip(tr("Queued experiments, run in order; Delete removes the selected one"));
    auto* remove = new QAction(tr("Remove from queue"), this);
    remove->setShortcut(QKeySequence::Delete);
    remove->setShortcutContext(Qt::WidgetShortcut);
    addAction(remove);
    setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(remove, &QAction::triggered, this, [this] {
        const int row = currentRow();
        if (row < 0 || row >= runs_.size()) return;
        runs_.remove(row);
        refresh();
    });
}

void RunQueue::enqueue(QueuedRun run) {
    runs_.push_back(std::move(run));
    refresh();
}

QueuedRun RunQueue::takeFirst() {
    QueuedRun first = runs_.takeFirst();
    refresh();
    return first;
}

QStringList RunQueue::save() const {
    QStringList saved;
    for (const auto& q : runs_) {
        const nlohmann::json j = {{"spec", q.spec},
                                  {"out_dir", q.outDir.toStdString()},
                                  {"title", q.title.toStdString()}};
        saved << QString::fromStdString(j.dump());
    }
    return saved;
}

void RunQueue::restore(const QStringList& saved) {
    for (const QString& item : saved) {
        const auto j = nlohmann::json::parse(item.toStdString(), nullptr, false);
        if (!j.is_object() || !j.contains("spec")) continue;
        runs_.push_back({j["spec"], QString::fromStdString(j.value("out_dir", "runs")),
                         QString::fromStdString(j.value("title", "queued run"))});
    }
    refresh();
}

void RunQueue::refresh() {
    clear();
    for (const auto& q : std::as_const(runs_)) addItem(q.title);
    setVisible(!runs_.isEmpty());
    Q_EMIT changed();
}

}  // namespace liftlab
