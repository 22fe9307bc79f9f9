// The run figures beyond the built-in tabs, one registration each: a panel type, the file key of
// its export, its title and tooltip, and how it is filled from a run folder. The GUI gives each
// its own tab (RunView) and `liftlab-cli report` writes each as figures/<key>.<format>, so a new
// panel is its own two files in widgets/ plus one entry in figure_catalogue.cpp.
#pragma once
#include <QString>
#include <functional>
#include <string>
#include <vector>

#include "run_folder_data.h"

class QWidget;

namespace liftlab {

class PlotPanel;

struct FigureEntry {
    QString key;    // file name of its export (figures/<key>.png) and the tab's key
    QString title;  // tab title
    QString tip;    // tab tooltip
    std::function<PlotPanel*(QWidget* parent)> make;
    // Fills a fresh (or cleared) panel from a run; false when the run has nothing for it.
    std::function<bool(PlotPanel& panel, const RunFolderData& run)> fill;
};

// Every registered figure, in tab order.
const std::vector<FigureEntry>& figure_catalogue();

// A catalogue entry for panel type P filled by `fill(P&, run)`.
template <typename P>
FigureEntry figure(QString key, QString title, QString tip,
                   std::function<bool(P&, const RunFolderData&)> fill) {
    return {std::move(key), std::move(title), std::move(tip),
            [](QWidget* parent) -> PlotPanel* { return new P(parent); },
            [fill = std::move(fill)](PlotPanel& panel, const RunFolderData& run) {
                return fill(static_cast<P&>(panel), run);
            }};
}

}  // namespace liftlab
