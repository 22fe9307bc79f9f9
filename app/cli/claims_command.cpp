#include "claims_command.h"

#include <QFont>
#include <QFontMetrics>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QString>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "claims/claims_runner.h"
#include "core/c_numbers.h"
#include "core/errors.h"
#include "progress_printer.h"
#include "report.h"
#include "run/run_files.h"
#include "stats/hypothesis_tests.h"

namespace liftlab::cli {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_claims_interrupted{false};

extern "C" void on_claims_sigint(int) {
    g_claims_interrupted = true;
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills at once
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

QColor verdict_colour(const std::string& v) {
    if (v == "holds") return QColor(0x1b, 0x7f, 0x3b);
    if (v == "refuted") return QColor(0xb0, 0x24, 0x18);
    if (v == "not run") return QColor(0x88, 0x88, 0x88);
    return QColor(0xa0, 0x6a, 0x00);
}

}  // namespace

std::string render_claims_pdf(const std::string& claims_dir) {
    const fs::path dir(claims_dir);
    // Bounded (regular file, size and nesting limits); a DataError names the file and line.
    const auto j = read_json_object((dir / "claims.json").string());
    const std::string path = (dir / "claims.pdf").string();
    QPdfWriter pdf(q(path));
    pdf.setPageSize(QPageSize(QPageSize::A3));
    pdf.setPageOrientation(QPageLayout::Landscape);
    pdf.setPageMargins(QMarginsF(10, 10, 10, 10), QPageLayout::Millimeter);
    pdf.setResolution(150);
    pdf.setTitle(QStringLiteral("LiftLab claims"));
    pdf.setCreator(QStringLiteral("liftlab-cli claims"));
    QPainter p;
    if (!p.begin(&pdf)) throw std::runtime_error("cannot write " + path);
    const QRect page = p.viewport();
    const double mm = pdf.resolution() / 25.4;
    int y = 0;

    QFont title_font(QStringLiteral("Sans"));
    title_font.setPixelSize(static_cast<int>(6 * mm));
    title_font.setBold(true);
    p.setFont(title_font);
    p.drawText(
        QRect(0, y, page.width(), static_cast<int>(8 * mm)), Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("LiftLab — the claims re-checked (%1 tier)").arg(q(j.value("tier", ""))));
    y += static_cast<int>(9 * mm);
    QFont small(QStringLiteral("Sans"));
    small.setPixelSize(static_cast<int>(2.6 * mm));
    p.setFont(small);
    const double wall = j.value("wall_seconds", 0.0);
    p.drawText(QRect(0, y, page.width(), static_cast<int>(4 * mm)),
               Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("%1 → %2, %3 min wall, OpenBLAS %4, status %5. Verdicts at α = 0.05 "
                              "for each row's test; 'inconclusive' gives the seeds a decision "
                              "would need (power 0.8). Details: claims.md.")
                   .arg(q(j.value("started", "")), q(j.value("finished", "")))
                   .arg(wall / 60, 0, 'f', 1)
                   .arg(q(j.value("blas_core", "")), q(j.value("status", ""))));
    y += static_cast<int>(6 * mm);

    // The table: id, measured, p, verdict (and the tuned verdict when there is one).
    const auto& claims = j.at("claims");
    const int row_h = static_cast<int>(4.2 * mm);
    const int col_id = static_cast<int>(48 * mm), col_p = static_cast<int>(18 * mm),
              col_v = static_cast<int>(30 * mm), col_t = static_cast<int>(34 * mm);
    const int col_ours = page.width() - col_id - col_p - col_v - col_t;
    QFont head = small;
    head.setBold(true);
    auto cell = [&](int x, int w, const QString& text, const QFont& f, QColor colour = Qt::black) {
        p.setFont(f);
        p.setPen(colour);
        const QFontMetrics fm(f);
        p.drawText(QRect(x + 2, y, w - 4, row_h), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(text, Qt::ElideRight, w - 4));
    };
    cell(0, col_id, QStringLiteral("claim"), head);
    cell(col_id, col_ours, QStringLiteral("measured (seeds)"), head);
    cell(col_id + col_ours, col_p, QStringLiteral("p"), head);
    cell(col_id + col_ours + col_p, col_v, QStringLiteral("verdict"), head);
    cell(col_id + col_ours + col_p + col_v, col_t, QStringLiteral("at the tuned best"), head);
    y += row_h;
    p.setPen(Qt::gray);
    p.drawLine(0, y, page.width(), y);
    for (const auto& c : claims) {
        const auto& v = c.at("preset");
        const std::string verdict = v.value("verdict", "");
        const auto pv = v.at("p");
        cell(0, col_id, q(c.value("id", "")), small);
        cell(col_id, col_ours,
             q(v.value("ours", "") +
               (v.value("seeds", "").empty() ? "" : " (" + v.value("seeds", "") + ")")),
             small);
        cell(col_id + col_ours, col_p,
             pv.is_number() ? QString::number(pv.get<double>(), 'g', 3) : QStringLiteral("–"),
             small);
        cell(col_id + col_ours + col_p, col_v, q(verdict), head, verdict_colour(verdict));
        if (c.value("tuned", false)) {
            const std::string tv = c.at("best").value("verdict", "");
            cell(col_id + col_ours + col_p + col_v, col_t, q(tv), head, verdict_colour(tv));
        } else {
            cell(col_id + col_ours + col_p + col_v, col_t, QStringLiteral("–"), small);
        }
        y += row_h;
    }
    y += static_cast<int>(3 * mm);

    // The key figures in a grid.
    std::vector<std::pair<std::string, std::string>> figures;  // (caption, file)
    for (const auto& c : claims) {
        const std::string f = c.value("figure", "");
        if (f.empty()) continue;
        const fs::path file = fs::path(f).is_absolute() ? fs::path(f) : dir / f;
        if (fs::exists(file))
            figures.emplace_back(c.value("id", "") + " — " + c.at("preset").value("verdict", ""),
                                 file.string());
    }
    if (!figures.empty()) {
        const int cols = figures.size() > 12 ? 5 : figures.size() > 6 ? 4 : 3;
        const int rows = static_cast<int>((figures.size() + cols - 1) / cols);
        const int cap_h = static_cast<int>(3.5 * mm);
        const int cell_w = page.width() / cols;
        const int cell_h = std::max(static_cast<int>(20 * mm), (page.height() - y) / rows);
        for (size_t i = 0; i < figures.size(); ++i) {
            const int cx = static_cast<int>(i % cols) * cell_w;
            const int cy = y + static_cast<int>(i / cols) * cell_h;
            p.setFont(head);
            p.setPen(Qt::black);
            p.drawText(QRect(cx, cy, cell_w, cap_h), Qt::AlignHCenter | Qt::AlignVCenter,
                       q(figures[i].first));
            const QImage img(q(figures[i].second));
            if (img.isNull()) continue;
            const QRect box(cx + 2, cy + cap_h, cell_w - 4, cell_h - cap_h - 4);
            const QSize s = img.size().scaled(box.size(), Qt::KeepAspectRatio);
            p.drawImage(
                QRect(box.x() + (box.width() - s.width()) / 2, box.y(), s.width(), s.height()),
                img);
        }
    }
    p.end();
    return path;
}

int command_claims(const ClaimsArgs& args) {
    claims::ClaimsOptions options;
    try {
        options.tier = claims::parse_tier(args.tier);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liftlab-cli: %s\n", e.what());
        return 2;
    }
    options.out_dir = args.out_dir;
    options.resume_dir = args.resume_dir;
    options.only = args.only;
    options.reuse = args.reuse;
    options.tune = args.tune;
    options.stop = &g_claims_interrupted;

    std::unique_ptr<ProgressPrinter> printer;
    claims::ClaimsCallbacks callbacks;
    callbacks.note = [&](const std::string& s) {
        if (printer) printer->finish();
        printer.reset();
        std::fprintf(stderr, "%s\n", s.c_str());
    };
    callbacks.progress = [&](const ProgressUpdate& u) {
        if (!printer) printer = std::make_unique<ProgressPrinter>(stderr);
        printer->update(u);
        return true;
    };
    callbacks.run_done = [&](const std::string& run_dir) {
        if (printer) printer->finish();
        printer.reset();
        try {
            render_report(run_dir, "png");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liftlab-cli: figures of %s not written: %s\n", run_dir.c_str(),
                         e.what());
        }
    };
    std::signal(SIGINT, on_claims_sigint);
    claims::ClaimsReport report;
    try {
        report = claims::run_claims(options, callbacks);
    } catch (const WriteError& e) {
        if (printer) printer->finish();
        std::fprintf(stderr, "liftlab-cli: claims: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        if (printer) printer->finish();
        std::fprintf(stderr, "liftlab-cli: claims: %s\n", e.what());
        return 2;
    }
    std::signal(SIGINT, SIG_DFL);
    if (printer) printer->finish();
    try {
        std::fprintf(stderr, "report: %s\n", render_claims_pdf(report.dir).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liftlab-cli: claims.pdf not written: %s\n", e.what());
    }
    std::fprintf(stderr, "\n%-28s %-13s %-10s %s\n", "claim", "verdict", "p", "tuned best");
    for (const auto& r : report.rows)
        std::fprintf(stderr, "%-28s %-13s %-10s %s\n", r.id.c_str(), r.preset.verdict.c_str(),
                     std::isfinite(r.preset.p) ? stats::format_p(r.preset.p).c_str() : "–",
                     r.tuned ? r.best.verdict.c_str() : "–");
    std::fprintf(stderr, "%zu claim(s) in %s min (%s tier, status %s)\nclaims folder:\n",
                 report.rows.size(), c_fixed(report.wall_seconds / 60, 1).c_str(),
                 claims::to_string(report.tier), report.status.c_str());
    std::printf("%s\n", report.dir.c_str());
    return report.status == "cancelled" ? 130 : 0;
}

}  // namespace liftlab::cli
