// Event file creation, buffering and flushing; reading back for tests and tools.
#include "runtime/summary/summary_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "platform/file.h"
#include "runtime/summary/tfrecord.h"

namespace tsr {
namespace {

constexpr int64_t kMaxEventFileBytes = int64_t{1} << 32;

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

double WallTime() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

}  // namespace

absl::StatusOr<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(const std::string& logdir,
                                                                     SummaryWriterOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create log directory '", logdir, "': ", ec.message()));
  const std::string base = absl::StrCat(logdir, "/events.out.tfevents.", absl::ToUnixSeconds(absl::Now()), ".",
                                        HostName(), options.filename_suffix);
  // Two writers started in the same second get distinct files.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string path = attempt == 0 ? base : absl::StrCat(base, ".", attempt);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0)
      return absl::InternalError(absl::StrCat("cannot create event file '", path, "': ", ErrnoMessage(errno)));
    std::unique_ptr<SummaryWriter> writer(new SummaryWriter(fd, std::move(path), std::move(options)));
    tessera::tb::Event version;
    version.set_wall_time(WallTime());
    version.set_file_version("brain.Event:2");
    std::lock_guard<std::mutex> lock(writer->mu_);
    TSR_RETURN_IF_ERROR(writer->AppendLocked(version));
    TSR_RETURN_IF_ERROR(writer->FlushLocked());
    return writer;
  }
  return absl::AlreadyExistsError(absl::StrCat("event files '", base, "[.N]' all exist"));
}

SummaryWriter::SummaryWriter(int fd, std::string path, SummaryWriterOptions options)
    : fd_(fd), path_(std::move(path)), options_(std::move(options)), last_flush_(absl::Now()) {}

SummaryWriter::~SummaryWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    FlushLocked().IgnoreError();  // nobody is left to tell
  }
  ::close(fd_);
}

absl::Status SummaryWriter::AddScalar(absl::string_view tag, float value, int64_t step) {
  tessera::tb::Event event;
  event.set_wall_time(WallTime());
  event.set_step(step);
  tessera::tb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(value);
  std::lock_guard<std::mutex> lock(mu_);
  return AppendLocked(event);
}

absl::Status SummaryWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return FlushLocked();
}

absl::Status SummaryWriter::AppendLocked(const tessera::tb::Event& event) {
  TSR_RETURN_IF_ERROR(error_);
  AppendTfRecord(event.SerializeAsString(), &buffer_);
  ++buffered_events_;
  if (buffered_events_ >= options_.max_buffered_events || absl::Now() - last_flush_ >= options_.flush_interval) {
    return FlushLocked();
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::FlushLocked() {
  TSR_RETURN_IF_ERROR(error_);
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = absl::InternalError(absl::StrCat("cannot write event file '", path_, "': ", ErrnoMessage(errno)));
      return error_;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
  buffered_events_ = 0;
  last_flush_ = absl::Now();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<tessera::tb::Event>> ReadEventFile(const std::string& path) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, ReadFileBounded(path, kMaxEventFileBytes, "event file size"));
  TSR_ASSIGN_OR_RETURN(std::vector<std::string> records, ParseTfRecords(bytes, path));
  std::vector<tessera::tb::Event> events(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    if (!events[i].ParseFromString(records[i])) {
      return absl::DataLossError(absl::StrCat("event file '", path, "': record ", i, " is not an Event"));
    }
  }
  return events;
}

}  // namespace tsr
