// The plain values a TrainingSession hands from the worker thread to the GUI (copies of the
// engine's ProgressUpdate fields, already as Qt types).
#pragma once
#include <QMetaType>
#include <QString>
#include <QVector>

#include "run/run_folder_schema.h"

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
    RunStatus status = RunStatus::Running;
    int step = 0;
    QString reason;
};

// Singular values of one method's features at one step (first seed only is shown).
struct SessionSpectrum {
    int step = 0;
    QString method;
    quint64 seed = 0;
    QVector<double> singularValues;
};

// One pre-readout coordinate θ̃ of one method at one step (ICNN escape traces).
struct SessionTrace {
    int step = 0;
    QString method;
    quint64 seed = 0;
    int coordinate = 0;
    double value = 0;
};

// A change applied to one method of one seed after a step: a row of events.csv (a setting:
// key "lambda", old → new; a push: key "push.readout", the shoulder fraction before → after).
struct SessionEvent {
    int step = 0;
    QString method;
    quint64 seed = 0;
    QString key;
    double oldValue = 0, newValue = 0;
};

// What became of a change sent into the running run: scheduled after `step`, or refused.
struct SessionEventOutcome {
    int id = 0;
    int step = 0;
    QString text;   // "cf-prox.lambda=10", "push.readout=0.33,depth=-4"
    QString error;  // "" when scheduled
};

}  // namespace liftlab

Q_DECLARE_METATYPE(liftlab::SessionEvent)
Q_DECLARE_METATYPE(liftlab::SessionEventOutcome)
Q_DECLARE_METATYPE(liftlab::SessionPoint)
Q_DECLARE_METATYPE(liftlab::SessionSpectrum)
Q_DECLARE_METATYPE(liftlab::SessionTrace)
Q_DECLARE_METATYPE(liftlab::SessionStatus)
