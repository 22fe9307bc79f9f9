// The base of every LiftLab plot panel (like LabPlot's BaseDock or PlotJuggler's
// PlotWidgetBase): one QCustomPlot filling the panel in the lab style, a bold title row, export
// by file extension, a note on an empty plot and the shared log-axis setup. A panel adds its own
// data calls and clear(); RunView lists the panels (app/gui/run_view.cpp).
#pragma once
#include <QSize>
#include <QString>
#include <QWidget>

class QCPAxis;
class QResizeEvent;
class QCPItemText;
class QCPTextElement;
class QCustomPlot;

namespace liftlab {

class PlotPanel : public QWidget {
    Q_OBJECT
public:
    QCustomPlot* plot() const { return plot_; }
    // Shows `title` in a bold row above the plot; empty removes it.
    void setTitle(const QString& title);
    // Removes every data series (titles, labels and options stay).
    virtual void clear() = 0;
    // Writes the figure at width × height pixels; PNG, SVG or PDF by the extension.
    virtual bool exportTo(const QString& path, int width, int height);
    // A grey note in the middle of the plot, shown while no series holds data ("" removes it).
    void setEmptyNote(const QString& note);
    QString emptyNote() const { return noteText_; }
    // Whether the note is drawn now (set, and no series holds data).
    bool emptyNoteShown() const;
    // A grey line under the figure saying how to read it (units, what is good), wrapped to the
    // panel's width and kept in exports; "" removes it.
    void setCaption(const QString& caption);
    QString caption() const { return captionText_; }

    // Logarithmic (with a log ticker) or linear scale on `axis`.
    static void setAxisLogScale(QCPAxis* axis, bool log);

protected:
    // Lays out the plot (no margins) with `minimum` as the panel's minimum size.
    explicit PlotPanel(QWidget* parent, QSize minimum = QSize(320, 240));
    // The title written into SVG and PDF exports.
    virtual QString exportTitle() const { return {}; }
    // Whether setTitle() added its row at the top of the plot layout.
    bool hasTitleRow() const { return title_ != nullptr; }
    void resizeEvent(QResizeEvent* event) override;

    QCustomPlot* const plot_;

private:
    void updateEmptyNote();
    void hideEmptyLegend();
    void wrapCaption();

    QCPTextElement* title_ = nullptr;
    QCPTextElement* caption_ = nullptr;
    QString captionText_;
    QCPItemText* emptyNote_ = nullptr;
    QString noteText_;                     // the note as set (shown wrapped)
    bool legendHiddenWhileEmpty_ = false;  // hideEmptyLegend() hid a shown legend
};

}  // namespace liftlab
