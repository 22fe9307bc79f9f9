#include "user_guide.h"

#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace liftlab {

namespace {
constexpr int kSourceTreeLevels = 5;  // build/<preset>/app/gui/liftlab: the repo is 4 levels up
const QString kGuide = QStringLiteral("user-guide.md");
}  // namespace

QString userGuidePath(QStringList* searched) {
    QStringList candidates;
    const QString env = qEnvironmentVariable("LIFTLAB_USER_GUIDE");
    if (!env.isEmpty()) candidates << env;
    const QDir bin(QCoreApplication::applicationDirPath());
    candidates << QDir::cleanPath(bin.filePath(QStringLiteral("../share/doc/liftlab/") + kGuide));
    QDir up = bin;
    for (int i = 0; i < kSourceTreeLevels && up.cdUp(); ++i)
        candidates << up.filePath(QStringLiteral("docs/") + kGuide);
    if (searched) *searched = candidates;
    for (const QString& c : std::as_const(candidates))
        if (QFileInfo(c).isFile()) return QFileInfo(c).absoluteFilePath();
    return QString();
}

void showUserGuide(QWidget* parent) {
    auto* dialog = parent->findChild<QDialog*>(QStringLiteral("userGuide"));
    if (!dialog) {
        dialog = new QDialog(parent);
        dialog->setObjectName(QStringLiteral("userGuide"));
        dialog->setWindowTitle(QObject::tr("LiftLab — user guide"));
        dialog->resize(820, 760);
        auto* layout = new QVBoxLayout(dialog);
        auto* text = new QTextBrowser(dialog);
        text->setObjectName(QStringLiteral("userGuideText"));
        text->setOpenExternalLinks(true);
        layout->addWidget(text);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
        QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
        layout->addWidget(buttons);
    }
    auto* text = dialog->findChild<QTextBrowser*>(QStringLiteral("userGuideText"));
    QStringList searched;
    const QString guide = userGuidePath(&searched);
    if (guide.isEmpty()) {
        QStringList places;
        for (const QString& s : std::as_const(searched))
            places << QStringLiteral("- `%1`").arg(QDir::toNativeSeparators(s));
        text->setMarkdown(
            QObject::tr("# The user guide is not here\n\nThis LiftLab found no `%1`. It looked "
                        "in:\n\n%2\n\nSet `LIFTLAB_USER_GUIDE` to the file, or read the guide in "
                        "the source tree (`docs/%1`) or the project's README. Meanwhile every "
                        "field of the form has a tooltip with its spec key and default, and "
                        "`liftlab --help` lists the tabs.")
                .arg(kGuide, places.join(QLatin1Char('\n'))));
    } else {
        text->setSearchPaths({QFileInfo(guide).absolutePath()});
        text->setSource(QUrl::fromLocalFile(guide), QTextDocument::MarkdownResource);
    }
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
}

}  // namespace liftlab
