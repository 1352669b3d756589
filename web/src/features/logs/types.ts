// A log entry (SPEC §3 Log entry). `seq` numbers a deployment's entries in order.

export type LogLevel = 'info' | 'warning' | 'error' | 'success'
export type LogType = 'deployment' | 'runtime'

export type LogEntry = {
  seq: number
  timestamp: string
  level: LogLevel | (string & {})
  type: LogType | (string & {})
  message: string
}
