// The claims table of a `liftlab-cli claims` folder: one bar per claim, −log10 of its test's
// p-value, coloured by the verdict (holds, refuted, inconclusive, not run), against the α = 0.05
// line; below it the table itself (claim, measured, seeds, test, p, verdict, the tuned verdict).
#pragma once
#include <QString>
#include <QVector>

#include "plot_panel.h"

class QCPBars;
class QTableWidget;

namespace liftlab {

class ClaimsPanel : public PlotPanel {
    Q_OBJECT
public:
    struct Row {
        QString id, claim, paper, ours, seeds, test, verdict, needed, tier, tunedVerdict;
        double p = qQNaN();  // NaN: no test
    };

    explicit ClaimsPanel(QWidget* parent = nullptr);

    // `whenNone`: the note shown while `rows` is empty (an opened check whose first claim has not
    // finished); the default note asks for a claims folder.
    void setRows(const QVector<Row>& rows, const QString& whenNone = QString());
    void clear() override;
    int rowCount() const { return static_cast<int>(rows_.size()); }
    const QTableWidget* table() const { return table_; }

private:
    void redraw();

    QVector<Row> rows_;
    QString whenNone_;
    QVector<QCPBars*> bars_;  // one series per verdict (its colour and legend entry)
    QTableWidget* table_ = nullptr;
};

}  // namespace liftlab
