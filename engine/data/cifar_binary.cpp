#include "data/cifar_binary.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/errors.h"

namespace liftlab {

namespace {

constexpr int64_t kChannels = 3;
constexpr int64_t kSide = 32;
constexpr int64_t kImageBytes = kChannels * kSide * kSide;  // 3072
constexpr int64_t kCifar10Classes = 10;
constexpr int64_t kCifar100CoarseClasses = 20;
constexpr int64_t kCifar100FineClasses = 100;

// The whole file as an n × record_bytes uint8 tensor.
torch::Tensor read_records(const std::string& path, int label_bytes) {
    const int64_t record_bytes = label_bytes + kImageBytes;
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) throw DataError(path, 0, "file not found");
    if (!std::filesystem::is_regular_file(status))
        throw DataError(path, 0, "is not a regular file");
    const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    if (ec) throw DataError(path, 0, "cannot read the file size: " + ec.message());
    if (size == 0)
        throw DataError(
            path, 0,
            "file is empty (expected records of " + std::to_string(record_bytes) + " bytes)");
    if (size % record_bytes != 0) {
        const int64_t truncated = size / record_bytes + 1;  // 1-based
        // The usual cause is CIFAR-10 read as CIFAR-100 or the other way round.
        const int other_label_bytes = label_bytes == 1 ? 2 : 1;
        const std::string hint = size % (other_label_bytes + kImageBytes) == 0
                                     ? "; the size fits records with " +
                                           std::to_string(other_label_bytes) +
                                           " label byte(s): CIFAR-10 has 1, CIFAR-100 has 2"
                                     : "";
        throw DataError(path, static_cast<int>(truncated),
                        "record " + std::to_string(truncated) + " is truncated: the file has " +
                            std::to_string(size) + " bytes, not a multiple of the record size " +
                            std::to_string(record_bytes) + " (" + std::to_string(label_bytes) +
                            " label byte(s) + " + std::to_string(kImageBytes) +
                            " image bytes); the last record has only " +
                            std::to_string(size % record_bytes) + " bytes" + hint);
    }
    auto records = torch::empty({size / record_bytes, record_bytes}, torch::kUInt8);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DataError(path, 0, "cannot open file (is it readable?)");
    in.read(reinterpret_cast<char*>(records.data_ptr<uint8_t>()), size);
    if (in.gcount() != size)
        throw DataError(
            path, 0,
            "read only " + std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes");
    return records;
}

}  // namespace

CifarData read_cifar_binary(const std::vector<std::string>& files, int label_bytes,
                            int label_index) {
    if (label_bytes != 1 && label_bytes != 2)
        throw std::invalid_argument(
            "read_cifar_binary: label_bytes must be 1 (CIFAR-10) or 2 "
            "(CIFAR-100), got " +
            std::to_string(label_bytes));
    if (label_index < 0 || label_index >= label_bytes)
        throw std::invalid_argument("read_cifar_binary: label_index must be in 0.." +
                                    std::to_string(label_bytes - 1) + ", got " +
                                    std::to_string(label_index));
    if (files.empty()) throw std::invalid_argument("read_cifar_binary: no files given");

    const int64_t nominal = label_bytes == 1   ? kCifar10Classes
                            : label_index == 0 ? kCifar100CoarseClasses
                                               : kCifar100FineClasses;
    std::vector<torch::Tensor> images, labels;
    for (const auto& path : files) {
        const auto records = read_records(path, label_bytes);
        labels.push_back(records.select(/*dim=*/1, label_index).to(torch::kInt64));
        // A label byte of 255 would otherwise train a 256-class head.
        const auto bad = (labels.back() >= nominal).nonzero();
        if (bad.size(0) > 0) {
            const int64_t i = bad[0][0].item<int64_t>();
            throw DataError(path, static_cast<int>(i + 1),
                            "record " + std::to_string(i + 1) + " has label " +
                                std::to_string(labels.back()[i].item<int64_t>()) + ", outside 0.." +
                                std::to_string(nominal - 1) + " (" +
                                (label_bytes == 1   ? "CIFAR-10"
                                 : label_index == 0 ? "CIFAR-100 coarse"
                                                    : "CIFAR-100 fine") +
                                ")");
        }
        // The file's channel-major layout is already C × H × W.
        images.push_back(records.narrow(/*dim=*/1, label_bytes, kImageBytes)
                             .reshape({-1, kChannels, kSide, kSide})
                             .to(torch::kFloat32)
                             .div_(255.0));
    }
    CifarData d;
    d.images = torch::cat(images);
    d.labels = torch::cat(labels);
    d.num_classes = nominal;
    return d;
}

}  // namespace liftlab
