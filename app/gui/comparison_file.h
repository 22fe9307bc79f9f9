// A saved comparison: a small JSON file (`*.liftlab-compare`) naming the run folders compared and
// the metric shown, so that a comparison reopens as it was:
//     {"liftlab_compare": 1, "runs": ["runs/cf-regression-20261204-210854", "…"],
//      "metric": "test_loss"}
// Run folders inside the file's own folder are written relative to it (the pair moves together),
// others absolute. Written atomically; read with an error naming the file and the key.
#pragma once
#include <QString>
#include <QStringList>

namespace liftlab {

inline constexpr char kComparisonSuffix[] = ".liftlab-compare";
inline constexpr int kComparisonVersion = 1;
inline constexpr int kMaxComparedRuns = 3;  // line styles: solid, dashed, dotted

struct Comparison {
    QStringList runs;  // absolute run folders, run A first
    QString metric;    // the metric the curves showed ("" for the default)
};

// False, with `error` saying why, when the file cannot be written.
bool writeComparison(const QString& file, const Comparison& comparison, QString* error);
// False, with `error` naming the file and what is wrong (not JSON, no "runs", a run that is not
// a string, fewer than two or more than kMaxComparedRuns runs, a newer version).
bool readComparison(const QString& file, Comparison* comparison, QString* error);

}  // namespace liftlab
