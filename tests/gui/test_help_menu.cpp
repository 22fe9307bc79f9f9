// The window's Help menu through its real widgets: the entries, the user guide rendered from
// docs/user-guide.md, the shortcut list read from the window's actions, and the About box's facts.
#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QTableWidget>
#include <QTest>
#include <QTextBrowser>
#include <memory>

#include "help_menu.h"
#include "main_window.h"
#include "user_guide.h"

using liftlab::MainWindow;

namespace {

QMenu* helpMenuOf(MainWindow& w) {
    for (QAction* a : w.menuBar()->actions())
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("Help"))
            return a->menu();
    return nullptr;
}

QAction* helpEntry(QMenu* menu, const QString& text) {
    for (QAction* a : menu->actions())
        if (a->text().remove(QLatin1Char('&')) == text) return a;
    return nullptr;
}

}  // namespace

TEST(HelpMenu, EntriesAndTheirDialogs) {
    auto window = std::make_unique<MainWindow>();
    window->show();
    QMenu* help = helpMenuOf(*window);
    ASSERT_NE(help, nullptr) << "no Help menu in the menu bar";
    QAction* guide = helpEntry(help, QStringLiteral("User guide"));
    QAction* keys = helpEntry(help, QStringLiteral("Keyboard shortcuts"));
    QAction* about = helpEntry(help, QStringLiteral("About LiftLab"));
    ASSERT_TRUE(guide && keys && about);
    EXPECT_EQ(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));

    // User guide (user_guide.h): the source tree's docs/user-guide.md (this build is not
    // installed), rendered; the menu entry is the F1 action itself.
    const QString path = liftlab::userGuidePath();
    ASSERT_FALSE(path.isEmpty());
    EXPECT_TRUE(path.endsWith(QLatin1String("docs/user-guide.md"))) << path.toStdString();
    guide->trigger();
    auto* browser = window->findChild<QTextBrowser*>(QStringLiteral("userGuideText"));
    ASSERT_NE(browser, nullptr);
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QString firstHeading = QString::fromUtf8(file.readLine()).trimmed().remove(0, 2);
    ASSERT_FALSE(firstHeading.isEmpty());
    // Rendered: the heading's text without its "# " marker, and no raw markdown heading.
    EXPECT_TRUE(browser->toPlainText().contains(firstHeading)) << firstHeading.toStdString();
    EXPECT_FALSE(browser->toPlainText().startsWith(QLatin1String("# ")));
    EXPECT_GT(browser->document()->blockCount(), 20);

    // Keyboard shortcuts: every action with a shortcut, read from the window itself.
    keys->trigger();
    auto* table = window->findChild<QTableWidget*>(QStringLiteral("shortcutTable"));
    ASSERT_NE(table, nullptr);
    const auto rows = liftlab::shortcutRows(window.get());
    ASSERT_EQ(table->rowCount(), rows.size());
    QStringList listed;
    for (int r = 0; r < table->rowCount(); ++r)
        listed << table->item(r, 0)->text() + QStringLiteral(" = ") + table->item(r, 1)->text();
    const auto native = [](QKeySequence k) { return k.toString(QKeySequence::NativeText); };
    for (const QString& expected :
         {QStringLiteral("File › Open run folder… = ") + native(QKeySequence::Open),
          QStringLiteral("Run › Start = ") + native(QKeySequence(Qt::CTRL | Qt::Key_R)),
          QStringLiteral("Help › User guide = ") + native(QKeySequence::HelpContents)})
        EXPECT_TRUE(listed.contains(expected))
            << expected.toStdString()
            << " not in: " << listed.join(QLatin1String("; ")).toStdString();
    // Every shortcut of every menu action is listed (none lost, none invented).
    int withShortcut = 0;
    for (QAction* top : window->menuBar()->actions())
        if (top->menu())
            for (QAction* a : top->menu()->actions())
                if (!a->shortcuts().isEmpty()) ++withShortcut;
    EXPECT_GE(table->rowCount(), withShortcut);
    EXPECT_GE(withShortcut, 8);

    // About: the fields, each a non-empty fact.
    about->trigger();
    auto* box = window->findChild<QMessageBox*>(QStringLiteral("aboutBox"));
    ASSERT_NE(box, nullptr);
    const QString text = box->text();
    const liftlab::AboutFacts f = liftlab::aboutFacts();
    EXPECT_EQ(f.qt, QString::fromLatin1(qVersion()));
    EXPECT_TRUE(f.libtorch.startsWith(QLatin1String("1."))) << f.libtorch.toStdString();
    EXPECT_TRUE(f.compiler.startsWith(QLatin1String("gcc")) ||
                f.compiler.startsWith(QLatin1String("clang")))
        << f.compiler.toStdString();
    for (const auto& [label, value] : {std::pair{"LiftLab", f.liftlab},
                                       {"Qt", f.qt},
                                       {"LibTorch", f.libtorch},
                                       {"BLAS core", f.blasCore},
                                       {"BLAS library", f.blasLibrary},
                                       {"Build type", f.buildType},
                                       {"Compiler", f.compiler}}) {
        EXPECT_FALSE(value.isEmpty()) << label;
        EXPECT_NE(value, QLatin1String("unknown")) << label;
        EXPECT_TRUE(text.contains(QStringLiteral("<td>%1</td><td><b>%2</b></td>")
                                      .arg(QLatin1String(label), value.toHtmlEscaped())))
            << label << " = " << value.toStdString() << " not in: " << text.toStdString();
    }
    EXPECT_TRUE(text.contains(QLatin1String("ICNN")));
    EXPECT_TRUE(text.contains(QLatin1String("closed-form")));
}
