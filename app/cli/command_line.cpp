#include "command_line.h"

#include <cstdio>

namespace liftlab::cli {

namespace {

const QCommandLineOption& help_option() {
    static const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                         QStringLiteral("Show this subcommand's usage."));
    return help;
}

const Subcommand* find_subcommand(const QString& name) {
    for (const auto& s : subcommands())
        if (s.name == name) return &s;
    return nullptr;
}

// The subcommands that take the option `name` ("grid"), comma-separated; "" for none.
QString subcommands_taking(const QString& name) {
    QStringList owners;
    for (const auto& s : subcommands())
        for (const auto& o : s.options)
            if (o.names().contains(name)) owners << s.name;
    owners.removeDuplicates();
    return owners.join(QStringLiteral(", "));
}

// Whether an option of that name takes a value in any subcommand (how to step over it while the
// subcommand is not yet known).
bool takes_value(const QString& name) {
    for (const auto& s : subcommands())
        for (const auto& o : s.options)
            if (o.names().contains(name)) return !o.valueName().isEmpty();
    return false;
}

// The first argument that is neither an option nor an option's value: the subcommand's name
// ("" when there is none). Options may come before it.
QString subcommand_name(const QStringList& arguments) {
    for (int i = 1; i < arguments.size(); ++i) {
        const QString& a = arguments[i];
        if (a == QLatin1String("--"))
            return i + 1 < arguments.size() ? arguments[i + 1] : QString();
        if (!a.startsWith(QLatin1Char('-')) || a == QLatin1String("-")) return a;
        const QString name = a.mid(a.startsWith(QLatin1String("--")) ? 2 : 1).section('=', 0, 0);
        if (!a.contains(QLatin1Char('=')) && takes_value(name)) ++i;
    }
    return {};
}

void print_subcommand_help(const Subcommand& s) {
    QString text = QStringLiteral("usage:\n") + QString::fromUtf8(s.usage) +
                   QStringLiteral("options of liftlab-cli %1:\n").arg(s.name);
    QList<QCommandLineOption> options = s.options;
    options << help_option();
    for (const auto& o : options) {
        QString left = QStringLiteral("  --") + o.names().join(QStringLiteral(", --"));
        if (!o.valueName().isEmpty()) left += QLatin1Char(' ') + o.valueName();
        QString help = o.description();
        if (!o.defaultValues().isEmpty())
            help += QStringLiteral(" (default: %1)").arg(o.defaultValues().join(QLatin1Char(',')));
        text += left.leftJustified(30) + QLatin1Char(' ') + help + QLatin1Char('\n');
    }
    std::fputs(text.toUtf8().constData(), stdout);
}

// The usage error of an unknown option (Qt's parser names it without its dashes).
int unknown_option(const QString& name, const Subcommand& s) {
    const QString dashed = (name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name;
    const QString owners = subcommands_taking(name);
    return usage_error(
        QStringLiteral("%1 is not an option of '%2'%3; `liftlab-cli %2 --help` lists its options")
            .arg(dashed, s.name,
                 owners.isEmpty() ? QString() : QStringLiteral(" (it is one of: %1)").arg(owners)),
        &s);
}

}  // namespace

QString full_usage() {
    QString text = QString::fromUtf8(
        R"(LiftLab compares training methods in two families: closed-form last layers (cf-ridge,
cf-prox, cf-rls, cf-full) against gradient-trained ones (sgd, adam) on a backbone + last-layer
task, and the ICNN energy model's positivity strategies (the lifter and its ablations, softplus,
pgd) and CP-Flow on a density task. `liftlab-cli list` names every preset, method and task kind;
`liftlab-cli SUBCOMMAND --help` lists a subcommand's options.
usage:
)");
    for (const auto& s : subcommands()) text += QString::fromUtf8(s.usage);
    return text;
}

int usage_error(const QString& msg, const Subcommand* subcommand) {
    const QString usage = subcommand
                              ? QStringLiteral("usage:\n") + QString::fromUtf8(subcommand->usage)
                              : full_usage();
    std::fprintf(stderr, "liftlab-cli: %s\n%s", msg.toUtf8().constData(),
                 usage.toUtf8().constData());
    return 2;
}

int run_command_line(const QStringList& arguments) {
    const QString name = subcommand_name(arguments);
    if (name.isEmpty()) {
        const bool help = arguments.contains(QStringLiteral("--help")) ||
                          arguments.contains(QStringLiteral("-h"));
        std::fputs(full_usage().toUtf8().constData(), help ? stdout : stderr);
        return help ? 0 : 2;
    }
    const Subcommand* s = find_subcommand(name);
    if (!s) return usage_error(QStringLiteral("unknown command '%1'").arg(name));
    QCommandLineParser parser;
    parser.addOptions(s->options);
    parser.addOption(help_option());
    if (!parser.parse(arguments)) {
        if (!parser.unknownOptionNames().isEmpty())
            return unknown_option(parser.unknownOptionNames().first(), *s);
        return usage_error(parser.errorText(), s);
    }
    if (parser.isSet(help_option())) {
        print_subcommand_help(*s);
        return 0;
    }
    QStringList positional = parser.positionalArguments();
    positional.removeFirst();  // the subcommand's name
    return s->run(parser, positional);
}

}  // namespace liftlab::cli
