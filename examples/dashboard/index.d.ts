/** The absolute path of the built dashboard (`dist/`, with `index.html`); it exists once `pnpm build` ran. */
export declare const directory: string
