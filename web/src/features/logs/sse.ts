// A Server-Sent Events parser (the "event stream" format of the HTML
// standard) fed with text chunks as they arrive. Chunks may end anywhere,
// even between the CR and the LF of a line break; lines may end with LF, CR
// or CRLF. Comment lines (":heartbeat") are reported apart, and a message
// is dispatched at each blank line when it has data.

export type SSEMessage = {
  /** The event type; "message" when the server named none. */
  event: string
  /** The data lines joined with "\n". */
  data: string
  /** The last event id seen so far on this stream ("" when none). */
  id: string
}

export type SSEParser = {
  /** Parses the next chunk of text. */
  feed: (chunk: string) => void
}

export function createSSEParser(
  onMessage: (message: SSEMessage) => void,
  onComment?: (comment: string) => void,
): SSEParser {
  let buffer = ''
  let skipLF = false
  let data: string[] = []
  let event = ''
  let lastId = ''

  const dispatch = () => {
    if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), id: lastId })
    data = []
    event = ''
  }

  const line = (text: string) => {
    if (text === '') {
      dispatch()
      return
    }
    if (text.startsWith(':')) {
      onComment?.(text.slice(1).trimStart())
      return
    }
    const colon = text.indexOf(':')
    const field = colon === -1 ? text : text.slice(0, colon)
    let value = colon === -1 ? '' : text.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        data.push(value)
        break
      case 'event':
        event = value
        break
      case 'id':
        if (!value.includes('\0')) lastId = value
        break
      default:
        // "retry" and unknown fields are ignored.
        break
    }
  }

  return {
    feed(chunk: string) {
      let text = chunk
      if (skipLF && text.startsWith('\n')) text = text.slice(1)
      skipLF = false
      buffer += text
      let start = 0
      for (let i = 0; i < buffer.length; i++) {
        const ch = buffer[i]
        if (ch !== '\n' && ch !== '\r') continue
        line(buffer.slice(start, i))
        if (ch === '\r') {
          if (i + 1 === buffer.length) skipLF = true
          else if (buffer[i + 1] === '\n') i++
        }
        start = i + 1
      }
      buffer = buffer.slice(start)
    },
  }
}
