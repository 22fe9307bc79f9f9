#include "run/run_store.h"

#include <unistd.h>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"

namespace liftlab {

namespace fs = std::filesystem;

void write_file_atomic(const std::string& path, const std::string& content) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write " + tmp);
        out << content;
        out.flush();
        if (!out) throw std::runtime_error("write failed: " + tmp);
    }
    fs::rename(tmp, path);
}

RunStore RunStore::create(const std::string& parent, const std::string& name) {
    fs::create_directories(parent);
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    const std::string base = (fs::path(parent) / (name + "-" + stamp)).string();
    std::string dir = base;
    for (int i = 2; !fs::create_directory(dir); ++i) dir = base + "-" + std::to_string(i);
    return RunStore(dir);
}

RunStore::RunStore(std::string dir) : dir_(std::move(dir)) {
    const std::string file = path("metrics.csv");
    const bool fresh = !fs::exists(file) || fs::file_size(file) == 0;
    metrics_ = std::fopen(file.c_str(), "a");
    if (!metrics_) throw std::runtime_error("cannot open " + file + ": " + std::strerror(errno));
    if (fresh) {
        std::fputs("step,method,seed,metric,value\n", metrics_);
        std::fflush(metrics_);
    }
}

RunStore::RunStore(RunStore&& other) noexcept
    : dir_(std::move(other.dir_)),
      metrics_(other.metrics_),
      spectra_(other.spectra_),
      traces_(other.traces_),
      dwells_(other.dwells_) {
    other.metrics_ = nullptr;
    other.spectra_ = nullptr;
    other.traces_ = nullptr;
    other.dwells_ = nullptr;
}

RunStore::~RunStore() {
    if (metrics_) std::fclose(metrics_);
    if (spectra_) std::fclose(spectra_);
    if (traces_) std::fclose(traces_);
    if (dwells_) std::fclose(dwells_);
}

void RunStore::append_traces(const std::vector<TracePoint>& traces) {
    if (traces.empty()) return;
    if (!traces_) {
        const std::string file = path("traces.csv");
        traces_ = std::fopen(file.c_str(), "a");
        if (!traces_) throw std::runtime_error("cannot open " + file + ": " + std::strerror(errno));
        std::fputs("step,method,seed,coordinate,value\n", traces_);
    }
    char value[64];
    for (const auto& t : traces) {
        std::snprintf(value, sizeof(value), "%.9g", t.value);
        const std::string row = std::to_string(t.step) + "," + t.method + "," +
                                std::to_string(t.seed) + "," + std::to_string(t.coordinate) + "," +
                                value + "\n";
        std::fputs(row.c_str(), traces_);
    }
    std::fflush(traces_);
}

void RunStore::append_dwells(const std::string& method, uint64_t seed,
                             const std::vector<int64_t>& dwells) {
    if (dwells.empty()) return;
    if (!dwells_) {
        const std::string file = path("dwells.csv");
        dwells_ = std::fopen(file.c_str(), "a");
        if (!dwells_) throw std::runtime_error("cannot open " + file + ": " + std::strerror(errno));
        std::fputs("method,seed,dwell\n", dwells_);
    }
    const std::string prefix = method + "," + std::to_string(seed) + ",";
    for (auto d : dwells) std::fputs((prefix + std::to_string(d) + "\n").c_str(), dwells_);
    std::fflush(dwells_);
}

void RunStore::append_spectra(const std::vector<SpectrumPoint>& spectra) {
    if (spectra.empty()) return;
    if (!spectra_) {
        const std::string file = path("spectra.csv");
        spectra_ = std::fopen(file.c_str(), "a");
        if (!spectra_)
            throw std::runtime_error("cannot open " + file + ": " + std::strerror(errno));
        std::fputs("step,method,seed,index,sigma\n", spectra_);
    }
    char value[64];
    for (const auto& s : spectra)
        for (size_t i = 0; i < s.singular_values.size(); ++i) {
            std::snprintf(value, sizeof(value), "%.17g", s.singular_values[i]);
            const std::string row = std::to_string(s.step) + "," + s.method + "," +
                                    std::to_string(s.seed) + "," + std::to_string(i) + "," + value +
                                    "\n";
            std::fputs(row.c_str(), spectra_);
        }
    std::fflush(spectra_);
}

void RunStore::write_json(const std::string& file, const nlohmann::json& j) const {
    write_file_atomic(path(file), j.dump(2) + "\n");
}

void RunStore::append_metrics(const std::vector<MetricPoint>& points) {
    char value[64];
    for (const auto& p : points) {
        std::snprintf(value, sizeof(value), "%.17g", p.value);
        const std::string row = std::to_string(p.step) + "," + p.method + "," +
                                std::to_string(p.seed) + "," + p.metric + "," + value + "\n";
        std::fputs(row.c_str(), metrics_);
    }
    std::fflush(metrics_);
}

std::vector<MetricRow> read_metrics_csv(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(path, 0, "cannot open metrics file");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::vector<MetricRow> rows;
    size_t pos = 0;
    int line_no = 0;
    while (pos < text.size()) {
        const size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) break;  // cut-off last row of a killed writer
        const std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (line_no == 1 || line.empty()) continue;  // header
        std::vector<std::string> f;
        size_t s = 0;
        for (size_t c; (c = line.find(',', s)) != std::string::npos; s = c + 1)
            f.push_back(line.substr(s, c - s));
        f.push_back(line.substr(s));
        if (f.size() != 5) throw DataError(path, line_no, "expected 5 fields");
        MetricRow r;
        try {
            r.step = std::stoi(f[0]);
            r.method = f[1];
            r.seed = std::stoull(f[2]);
            r.metric = f[3];
            r.value = std::stod(f[4]);
        } catch (const std::exception&) {
            throw DataError(path, line_no, "malformed row '" + line + "'");
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

}  // namespace liftlab
