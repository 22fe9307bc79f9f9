// The plain values a TrainingSession hands from the worker thread to the GUI (copies of the
// engine's ProgressUpdate fields, already as Qt types).
#pragma once
#include <QMetaType>
#include <QString>
#include <QVector>

namespace liftlab {

struct SessionPoint {
    int step = 0;
    QString method;  // label
    quint64 seed = 0;
    QString metric;
    double value = 0;
};

struct SessionStatus {
    QString method;
    quint64 seed = 0;
    QString status;  // running | ok | diverged | failed | cancelled
    int step = 0;
    QString reason;
};

}  // namespace liftlab

Q_DECLARE_METATYPE(liftlab::SessionPoint)
Q_DECLARE_METATYPE(liftlab::SessionStatus)
