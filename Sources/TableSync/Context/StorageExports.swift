// The storage core's public types (its errors, ``FailureKind``) are part of this library's face: a caller that
// imports TableSync catches a ``StoreError`` without importing the core.
@_exported import TableSyncStorage
