/**
 * The API reference page (Scalar) under the API, loaded on its first request:
 * its script is about 13 MB of heap that a server need not hold until
 * someone opens the page.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import { Effect, Scope } from "effect"

/** Serves the reference page of the API in context at `path`. */
export const layer = (path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const { api } = yield* HttpApi.Api
      const scope = yield* Effect.scope
      // Built once, on first use, for the life of the server.
      const page = yield* Effect.cached(
        Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
          Effect.flatMap((Scalar) => HttpLayerRouter.toHttpEffect(Scalar.layerHttpLayerRouter({ api, path }))),
          Scope.extend(scope)
        )
      )
      yield* router.get(path, Effect.scoped(Effect.flatMap(page, (app) => app)))
    })
  )
