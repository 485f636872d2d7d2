/** Counts JSON-RPC HTTP requests (round trips) made through a transport. */
export class RequestCounter {
  count = 0
  methods: string[] = []
  readonly fetchFn = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    this.count++
    try {
      const body = JSON.parse(String(init?.body ?? '{}')) as
        | { method?: string }
        | { method?: string }[]
      for (const item of Array.isArray(body) ? body : [body]) this.methods.push(String(item.method))
    } catch {
      this.methods.push('?')
    }
    return fetch(input, init)
  }
  reset() {
    this.count = 0
    this.methods = []
  }
  /** Runs `fn` and returns its result and how many HTTP requests it made. */
  async measure<T>(
    fn: () => Promise<T>,
  ): Promise<{ result: T; requests: number; methods: string[] }> {
    this.reset()
    const result = await fn()
    return { result, requests: this.count, methods: [...this.methods] }
  }
}
