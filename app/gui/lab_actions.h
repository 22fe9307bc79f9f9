// The lab window's menus and their actions (File: open, compare, exports; Run: start, queue,
// pause, stop, landscapes; View: the tabs, the history dock, the dark palette; Help: help_menu.h),
// in the manner of LabPlot's ActionsManager: the window keeps the state, this class only asks it
// to act. It also remembers the folders the file dialogs last used (settings "paths/open",
// "paths/export").
#pragma once
#include <QObject>
#include <QString>

class QAction;
class QDockWidget;
class QSettings;

namespace liftlab {

class MainWindow;

class LabActions : public QObject {
    Q_OBJECT
public:
    LabActions(MainWindow* window, QDockWidget* historyDock);

    QAction* pauseAction() const { return pause_; }
    QAction* darkAction() const { return dark_; }

    void readSettings(const QSettings& settings);
    void writeSettings(QSettings& settings) const;

private:
    void buildFileMenu();
    void buildRunMenu();
    void buildViewMenu(QDockWidget* historyDock);
    void openFolder();
    void compareWith();
    void exportPanel();
    void exportAll();
    void exportCsv();
    void chooseResolution();
    QString exportDir() const;

    MainWindow* window_;
    QAction* pause_ = nullptr;
    QAction* dark_ = nullptr;
    QString openDir_;    // the folder the last opened run was in ("" until one is opened)
    QString exportDir_;  // the folder of the last export ("" until one is written)
};

}  // namespace liftlab
