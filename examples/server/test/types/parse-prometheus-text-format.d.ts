/** The parser's output, as the tests read it (the package ships no types). */
declare module "parse-prometheus-text-format" {
  interface Sample {
    readonly labels?: Record<string, string>
    readonly value?: string
    readonly count?: string
    readonly sum?: string
    readonly buckets?: Record<string, string>
  }
  interface Family {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<Sample>
  }
  const parse: (text: string) => ReadonlyArray<Family>
  export default parse
}
