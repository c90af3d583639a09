// Error-propagation macros used across Tessera.
//
//   TSR_RETURN_IF_ERROR(expr);            // returns the status if !ok()
//   TSR_ASSIGN_OR_RETURN(auto x, expr);   // unwraps an absl::StatusOr<T>
#ifndef TESSERA_GRAPH_STATUS_MACROS_H_
#define TESSERA_GRAPH_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TSR_CONCAT_INNER_(a, b) a##b
#define TSR_CONCAT_(a, b) TSR_CONCAT_INNER_(a, b)

#define TSR_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::absl::Status tsr_status_ = (expr);       \
    if (!tsr_status_.ok()) return tsr_status_; \
  } while (false)

#define TSR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

#define TSR_ASSIGN_OR_RETURN(lhs, expr) TSR_ASSIGN_OR_RETURN_IMPL_(TSR_CONCAT_(tsr_statusor_, __LINE__), lhs, expr)

#endif  // TESSERA_GRAPH_STATUS_MACROS_H_
