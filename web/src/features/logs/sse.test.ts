import { describe, expect, it } from 'vitest'
import { createSSEParser, type SSEMessage } from './sse'

function parse(chunks: string[]) {
  const messages: SSEMessage[] = []
  const comments: string[] = []
  const parser = createSSEParser(
    (m) => messages.push(m),
    (c) => comments.push(c),
  )
  for (const chunk of chunks) parser.feed(chunk)
  return { messages, comments }
}

const stream =
  'data: {"type":"connected"}\n\n' +
  'id: 1\ndata: {"type":"log","data":{"seq":1,"message":"Cloning"}}\n\n' +
  ': heartbeat\n\n' +
  'id: 2\ndata: {"type":"log","data":{"seq":2,"message":"Done"}}\n\n'

describe('SSE parser', () => {
  it('reads messages, ids and heartbeats', () => {
    const { messages, comments } = parse([stream])
    expect(messages.map((m) => [m.id, JSON.parse(m.data).type])).toEqual([
      ['', 'connected'],
      ['1', 'log'],
      ['2', 'log'],
    ])
    expect(messages.every((m) => m.event === 'message')).toBe(true)
    expect(comments).toEqual(['heartbeat'])
  })

  it('gives the same messages whatever the chunk boundaries', () => {
    const whole = parse([stream]).messages
    for (let size = 1; size <= 13; size++) {
      const chunks: string[] = []
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.slice(i, i + size))
      expect(parse(chunks).messages).toEqual(whole)
    }
  })

  it('splits a line mid-way and keeps the partial line for the next chunk', () => {
    const { messages } = parse(['id: 7\nda', 'ta: {"type":"lo', 'g"}\n', '\n'])
    expect(messages).toEqual([{ event: 'message', data: '{"type":"log"}', id: '7' }])
  })

  it('accepts CRLF and CR line ends, even a CRLF split across chunks', () => {
    const { messages } = parse(['id: 3\r\ndata: a\r', '\n\r', '\ndata: b\r\r'])
    expect(messages).toEqual([
      { event: 'message', data: 'a', id: '3' },
      { event: 'message', data: 'b', id: '3' },
    ])
  })

  it('joins several data lines and honours event names', () => {
    const { messages } = parse(['event: update\ndata: one\ndata:two\n\n'])
    expect(messages).toEqual([{ event: 'update', data: 'one\ntwo', id: '' }])
  })

  it('dispatches nothing without data or before the blank line', () => {
    const { messages } = parse(['id: 4\n\n', 'retry: 1000\n\n', 'data: pending'])
    expect(messages).toEqual([])
  })

  it('keeps the last id for later messages and ignores ids with NUL', () => {
    const { messages } = parse(['id: 5\ndata: a\n\n', 'data: b\n\n', 'id: 6\0\ndata: c\n\n'])
    expect(messages.map((m) => m.id)).toEqual(['5', '5', '5'])
  })
})
