package api

// SyncBuffer is syncBuffer for the package's external tests (api_test).
type SyncBuffer = syncBuffer
