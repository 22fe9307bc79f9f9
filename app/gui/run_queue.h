// The lab's run queue: experiments waiting for the running one, run in order. Listed by title;
// Delete (or the context menu) removes the selected one. Kept across sessions as JSON strings.
#pragma once
#include <QListWidget>
#include <QString>
#include <QStringList>
#include <QVector>
#include <nlohmann/json.hpp>

namespace liftlab {

struct QueuedRun {
    nlohmann::json spec;
    QString outDir, title;
};

class RunQueue : public QListWidget {
    Q_OBJECT
public:
    explicit RunQueue(QWidget* parent = nullptr);

    void enqueue(QueuedRun run);
    QueuedRun takeFirst();
    bool isEmpty() const { return runs_.isEmpty(); }
    int size() const { return runs_.size(); }

    // The queue as one JSON string per run, and back (unreadable entries are skipped).
    QStringList save() const;
    void restore(const QStringList& saved);

Q_SIGNALS:
    // A run was added or removed.
    void changed();

private:
    void refresh();

    QVector<QueuedRun> runs_;
};

}  // namespace liftlab
