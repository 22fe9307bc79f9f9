// The window's Help menu: the user guide (user_guide.h: docs/user-guide.md, rendered), the keyboard
// shortcuts (read from the window's own actions, so the list cannot go stale) and About (the
// versions of LiftLab, Qt and LibTorch, the BLAS core, the build). The engine's facts arrive here
// as plain strings (core/version.h); no torch header is included.
#pragma once
#include <QList>
#include <QPair>
#include <QString>

class QAction;
class QMainWindow;
class QMenu;

namespace liftlab {

// Adds "&Help" (`userGuide`, the F1 action; Keyboard shortcuts; About LiftLab) to `window`'s
// menu bar.
QMenu* addHelpMenu(QMainWindow* window, QAction* userGuide);

// Every action of `window` with a shortcut: ("File › Open run folder…", "Ctrl+O"), in menu order,
// then the actions outside the menus. Several shortcuts of one action are joined by ", ".
QList<QPair<QString, QString>> shortcutRows(QMainWindow* window);

struct AboutFacts {
    QString liftlab;      // LiftLab's version
    QString qt;           // the Qt the program runs on (qVersion())
    QString libtorch;     // LibTorch's version
    QString blasCore;     // OpenBLAS's kernel core ("Haswell", "SkylakeX", …)
    QString blasLibrary;  // the BLAS LibTorch loads (libblas.so.3's target)
    QString buildType;    // CMAKE_BUILD_TYPE of this build
    QString compiler;     // "gcc 12.2.0"
};
AboutFacts aboutFacts();
// The About box's text (rich text), one line per fact.
QString aboutText(const AboutFacts& facts);

}  // namespace liftlab
