// liftlab-cli's command line: each subcommand has its own options and help; an option of another
// subcommand, or of none, is a usage error (exit 2) naming the option and the subcommand.
//
// Adding an option to a subcommand: one QCommandLineOption in its `options` (subcommands.cpp),
// then read it by name in its `run` function (parser.value("name") / parser.isSet("name")).
#pragma once
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <vector>

namespace liftlab::cli {

struct Subcommand {
    QString name;
    // Its lines of the synopsis (the whole synopsis is every subcommand's, in the table's order).
    const char* usage = "";
    QList<QCommandLineOption> options;  // its own options (--help is every subcommand's)
    // Runs it: `positional` are the arguments after the subcommand's name. Returns the exit code.
    int (*run)(const QCommandLineParser& parser, const QStringList& positional) = nullptr;
};

// liftlab-cli's subcommands, in the synopsis's order (subcommands.cpp).
const std::vector<Subcommand>& subcommands();

// What `liftlab-cli --help` prints: what LiftLab does, then every subcommand's synopsis.
QString full_usage();

// Prints "liftlab-cli: MSG" and the synopsis (the subcommand's alone when given) on stderr;
// returns 2, the exit code of a usage error.
int usage_error(const QString& msg, const Subcommand* subcommand = nullptr);

// Parses `arguments` (the program's name first) and runs the subcommand they name; returns the
// process's exit code. `liftlab-cli --help`: the synopsis (0); `liftlab-cli SUBCOMMAND --help`:
// its synopsis and options (0); no subcommand, an unknown one, or an option the subcommand does
// not take: a usage error (2).
int run_command_line(const QStringList& arguments);

}  // namespace liftlab::cli
