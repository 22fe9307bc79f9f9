// Points per method on two (optionally log) axes, e.g. the one-step gain against κ, with an
// optional reference curve (the classical bound).
#pragma once
#include <QString>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPTextElement;

namespace liftlab {

class ScatterPanel : public QWidget {
    Q_OBJECT
public:
    explicit ScatterPanel(QWidget* parent = nullptr);

    void setAxes(const QString& xLabel, const QString& yLabel, bool logX, bool logY);
    void setTitle(const QString& title);
    void addPoints(const QString& method, const QVector<double>& x, const QVector<double>& y);
    // A dashed reference curve y = f(x) sampled at x (drawn in grey, legend `name`).
    void setReference(const QString& name, const QVector<double>& x, const QVector<double>& y);
    void clear();
    int seriesCount() const;
    int pointCount(const QString& method) const;
    void rescale();
    bool exportTo(const QString& path, int width, int height);
    QCustomPlot* plot() const { return plot_; }

private:
    QCustomPlot* plot_;
    QCPTextElement* title_ = nullptr;
    bool logX_ = false, logY_ = false;
};

}  // namespace liftlab
