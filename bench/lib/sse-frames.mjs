// The SSE framing the load clients read: text in, one call per event with
// data (comments and data-less frames skipped), the data as the raw text.

/**
 * A reader of an event stream's text: feed it each chunk; it calls
 * `onFrame(event, data)` for every complete frame that carries data.
 */
export const frameReader = (onFrame) => {
  let buffer = ""
  return (text) => {
    buffer += text
    let end
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let event = "message"
      let data = ""
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim()
        else if (line.startsWith("data:")) data += line.slice(5).trim()
      }
      if (data !== "" && onFrame(event, data) === false) return
    }
  }
}
