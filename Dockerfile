# warren on Node 24 LTS. TypeScript runs through Node's type stripping: no build step.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The `node` devDependency only pins the runtime for npm scripts; the image already is Node 24.
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
RUN mkdir -p /app/data && chown -R node:node /app
USER node
EXPOSE 7070
ENTRYPOINT ["node", "bin/warren.js"]
CMD ["start", "--config", "warren.yaml"]
