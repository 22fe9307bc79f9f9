// One bar per method for a scalar with a sign and a significance test, e.g. σ²_Jac (docs/methods.md
// §4.1): the trace of the cross-covariance between the emitted weights θ̃_b and
// the gradients g_b over probe batches. Theorem 1 says removing any one lifter ingredient makes it
// vanish, so the panel shows each bar against a zero line, with ± sd error bars (e.g. the sd of
// the permutation null) and its permutation p-value written beyond the bar's end; bars with
// p < 0.05 get a bold label with a star. Values may be tiny (10⁻⁴) and of either sign.
#pragma once
#include <QString>
#include <QVector>
#include <QWidget>

#include "plot_panel.h"

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

class AblationPanel : public PlotPanel {
    Q_OBJECT
public:
    explicit AblationPanel(QWidget* parent = nullptr);

    void setValueLabel(const QString& label);  // y axis, e.g. "σ²_Jac"
    // Replaces a previous bar of that method (which keeps its place); new methods go right.
    // A non-finite value is ignored; a non-finite or negative sd draws no error bar; a NaN p
    // (or one outside [0, 1]) draws no label.
    void setBar(const QString& method, double value, double errorSd, double pValue);
    // A structural zero (e.g. σ²_Jac of a strategy without a slack): the method keeps its
    // category but gets no bar, no error bar and no p; `label` is written on the zero line.
    void setStructuralZero(const QString& method, const QString& label);
    bool isStructuralZero(const QString& method) const;
    // Grey line under the plot explaining the marks (default: error bars ± sd · * p < 0.05);
    // empty hides it.
    void setNote(const QString& note);

    void clear() override;
    int barCount() const { return bars_.size(); }
    // What the empty plot says (default "no bars"): why the run has none and what to do.
    void setEmptyReason(const QString& reason);
    QString emptyReason() const { return emptyReason_; }
    // "p = 0.005", "p < 0.001", "p = 1" ("" for an unknown method or no p).
    QString pLabel(const QString& method) const;
    // Whether the method's bar is marked as significant (p < 0.05).
    bool isSignificant(const QString& method) const;
    static QString formatP(double p);

    bool exportTo(const QString& path, int width, int height) override;

private:
    struct Bar {
        QString method;
        double value = 0;
        double sd = 0;
        double p = 0;
        QString structural;  // non-empty: a structural zero with this label, no bar
    };
    void redraw();
    // Replaces the bar of bar.method (which keeps its place) or appends it, then redraws.
    void upsert(const Bar& bar);

    QCPTextElement* note_ = nullptr;
    QString emptyReason_;
    QVector<Bar> bars_;
};

}  // namespace liftlab
