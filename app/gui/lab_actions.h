// The lab window's menus and their actions (File: open, compare, save/open a comparison, exports;
// Run: start, queue, pause, stop, re-run, landscapes; View: the tabs, the history dock, the dark
// palette; F1: the user guide), in the manner of
// LabPlot's ActionsManager: the window keeps the state, this class only asks it to act. It also
// remembers the folders the file dialogs last used (settings "paths/open", "paths/export").
#pragma once
#include <QObject>
#include <QString>

class QAction;
class QDockWidget;
class QSettings;

namespace liftlab {

class MainWindow;
class RunControls;

class LabActions : public QObject {
    Q_OBJECT
public:
    // The Run menu shows `controls`' actions (the toolbar's), so each shortcut exists once.
    LabActions(MainWindow* window, QDockWidget* historyDock, RunControls* controls);

    QAction* darkAction() const { return dark_; }
    QAction* saveComparisonAction() const { return saveComparison_; }
    QAction* helpAction() const { return help_; }

    void readSettings(const QSettings& settings);
    void writeSettings(QSettings& settings) const;

private:
    void buildFileMenu();
    void buildRunMenu(RunControls* controls);
    void openComparison();
    void saveComparison();
    void buildViewMenu(QDockWidget* historyDock);
    void openFolder();
    void compareWith();
    void exportPanel();
    void exportAll();
    void exportCsv();
    void chooseResolution();
    QString exportDir() const;

    MainWindow* window_;
    QAction* dark_ = nullptr;
    QAction* saveComparison_ = nullptr;
    QAction* help_ = nullptr;
    QString openDir_;    // the folder the last opened run was in ("" until one is opened)
    QString exportDir_;  // the folder of the last export ("" until one is written)
};

}  // namespace liftlab
