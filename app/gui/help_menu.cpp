#include "help_menu.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtGlobal>

#include "core/version.h"

namespace liftlab {

namespace {

QString plainText(const QAction* a) {
    QString t = a->text();
    t.remove(QLatin1Char('&'));
    return t;
}

QString keysOf(const QAction* a) {
    QStringList keys;
    for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText);
    return keys.join(QStringLiteral(", "));
}

void collectMenu(const QMenu* menu, const QString& path, QList<QPair<QString, QString>>& rows,
                 QSet<const QAction*>& seen) {
    for (const QAction* a : menu->actions()) {
        seen.insert(a);
        if (a->menu()) {
            collectMenu(a->menu(), path + plainText(a) + QStringLiteral(" › "), rows, seen);
        } else if (!a->isSeparator() && !a->shortcuts().isEmpty()) {
            rows.append({path + plainText(a), keysOf(a)});
        }
    }
}

// A dialog of its own (deleted on close, not modal: the window keeps running).
QDialog* helpDialog(QMainWindow* window, const QString& title, QWidget* body) {
    auto* dialog = new QDialog(window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(title);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(body);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    return dialog;
}

void showShortcuts(QMainWindow* window) {
    const auto rows = shortcutRows(window);
    auto* table = new QTableWidget(rows.size(), 2);
    table->setObjectName(QStringLiteral("shortcutTable"));
    table->setHorizontalHeaderLabels({QObject::tr("Action"), QObject::tr("Keys")});
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    for (int r = 0; r < rows.size(); ++r) {
        table->setItem(r, 0, new QTableWidgetItem(rows[r].first));
        table->setItem(r, 1, new QTableWidgetItem(rows[r].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    QDialog* dialog = helpDialog(window, QObject::tr("Keyboard shortcuts"), table);
    dialog->setObjectName(QStringLiteral("shortcutDialog"));
    dialog->resize(520, 560);
    dialog->show();
}

void showAbout(QMainWindow* window) {
    auto* box = new QMessageBox(QMessageBox::NoIcon, QObject::tr("About LiftLab"),
                                aboutText(aboutFacts()), QMessageBox::Close, window);
    box->setObjectName(QStringLiteral("aboutBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setTextFormat(Qt::RichText);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->show();
}

}  // namespace

QList<QPair<QString, QString>> shortcutRows(QMainWindow* window) {
    QList<QPair<QString, QString>> rows;
    QSet<const QAction*> seen;
    for (const QAction* top : window->menuBar()->actions())
        if (top->menu())
            collectMenu(top->menu(), plainText(top) + QStringLiteral(" › "), rows, seen);
    for (const QAction* a : window->findChildren<QAction*>())
        if (!seen.contains(a) && !a->shortcuts().isEmpty() && !a->text().isEmpty())
            rows.append({plainText(a), keysOf(a)});
    return rows;
}

AboutFacts aboutFacts() {
    const nlohmann::json v = version_info();
    const auto text = [&](const char* key) {
        return v.contains(key) && v[key].is_string()
                   ? QString::fromStdString(v[key].get<std::string>())
                   : QStringLiteral("unknown");
    };
    AboutFacts f;
    f.liftlab = text("liftlab");
    f.qt = QString::fromLatin1(qVersion());
    f.libtorch = text("libtorch");
    f.blasCore = text("blas_core");
    f.blasLibrary = text("blas");
    f.buildType = QStringLiteral(LIFTLAB_BUILD_TYPE);
    if (f.buildType.isEmpty()) f.buildType = QStringLiteral("unspecified");
    f.compiler = text("compiler");
    return f;
}

QString aboutText(const AboutFacts& f) {
    const auto row = [](const QString& key, const QString& value) {
        return QStringLiteral("<tr><td>%1</td><td><b>%2</b></td></tr>")
            .arg(key.toHtmlEscaped(), value.toHtmlEscaped());
    };
    return QStringLiteral(
               "<h3>LiftLab %1</h3><p>A lab for comparing training methods: closed-form last "
               "layers and their gradient baselines, and the ICNN family (the lifter, "
               "positivity strategies, CP-Flow).</p><table>")
               .arg(f.liftlab.toHtmlEscaped()) +
           row(QObject::tr("LiftLab"), f.liftlab) + row(QObject::tr("Qt"), f.qt) +
           row(QObject::tr("LibTorch"), f.libtorch) + row(QObject::tr("BLAS core"), f.blasCore) +
           row(QObject::tr("BLAS library"), f.blasLibrary) +
           row(QObject::tr("Build type"), f.buildType) + row(QObject::tr("Compiler"), f.compiler) +
           QStringLiteral("</table>");
}

QMenu* addHelpMenu(QMainWindow* window, QAction* userGuide) {
    QMenu* help = window->menuBar()->addMenu(QObject::tr("&Help"));
    help->setObjectName(QStringLiteral("helpMenu"));
    help->addAction(userGuide);  // F1 (user_guide.h), one action for the key and the menu
    help->addAction(QObject::tr("&Keyboard shortcuts"), window,
                    [window] { showShortcuts(window); });
    help->addSeparator();
    help->addAction(QObject::tr("&About LiftLab"), window, [window] { showAbout(window); });
    return help;
}

}  // namespace liftlab
