// `SummaryWriter`: TensorBoard event files. Creates
// "<logdir>/events.out.tfevents.<unix seconds>.<hostname>" holding TFRecords of Event
// protos (runtime/proto/event.proto, wire-compatible with TensorFlow's): first the
// file version "brain.Event:2", then one event per scalar.
//
//   TSR_ASSIGN_OR_RETURN(auto writer, SummaryWriter::Create(logdir));
//   TSR_RETURN_IF_ERROR(writer->AddScalar("train/loss", loss, step));
//
// Events are buffered and written when `flush_interval` has passed since the last
// write (checked at each AddScalar; there is no background thread), when
// `max_buffered_events` are waiting, on Flush() and on destruction. Thread-safe.
#ifndef TESSERA_RUNTIME_SUMMARY_SUMMARY_WRITER_H_
#define TESSERA_RUNTIME_SUMMARY_SUMMARY_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "runtime/proto/event.pb.h"

namespace tsr {

struct SummaryWriterOptions {
  absl::Duration flush_interval = absl::Seconds(10);
  int max_buffered_events = 100;
  std::string filename_suffix;  // appended to the file name, e.g. ".train"
};

class SummaryWriter {
 public:
  // Creates `logdir` when missing and the event file, and writes the version record.
  static absl::StatusOr<std::unique_ptr<SummaryWriter>> Create(const std::string& logdir,
                                                               SummaryWriterOptions options = {});
  // Flushes and closes the file.
  ~SummaryWriter();

  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  absl::Status AddScalar(absl::string_view tag, float value, int64_t step);
  // Writes every buffered event to the file.
  absl::Status Flush();

  const std::string& path() const { return path_; }

 private:
  SummaryWriter(int fd, std::string path, SummaryWriterOptions options);
  // Frames and buffers `event`, then flushes when due. Requires mu_.
  absl::Status AppendLocked(const tessera::tb::Event& event);
  absl::Status FlushLocked();

  const int fd_;
  const std::string path_;
  const SummaryWriterOptions options_;
  std::mutex mu_;
  std::string buffer_;
  int buffered_events_ = 0;
  absl::Time last_flush_;
  absl::Status error_;  // the first write error, returned from then on
};

// All events of an event file, checking the framing's checksums.
absl::StatusOr<std::vector<tessera::tb::Event>> ReadEventFile(const std::string& path);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_SUMMARY_SUMMARY_WRITER_H_
